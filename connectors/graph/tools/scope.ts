import { ToolError, type ToolContext } from '../../contract.js';
import { ServiceError } from '../../../runtime/errors.js';
import { parseNodeId } from '../../../runtime/graph/names.js';
import type { GraphScope } from '../../../runtime/graph/store.js';
import { DEFAULT_REALM } from '../../../domains/organizations.js';

/** the run's organization and realm: a tool never reaches another */
export const scopeOf = (ctx: ToolContext): GraphScope => ({ orgId: ctx.orgId, realm: ctx.realm ?? DEFAULT_REALM });

/** runs a store call, turning the errors the caller can fix into ToolErrors the model reads */
export async function asTool<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ServiceError && error.fault === 'user') throw new ToolError(error.code, error.message, error.details ? { ...error.details } : undefined);
    throw error;
  }
}

export function nodeRef(id: unknown): { label: string; key: string } {
  return parseNodeId(String(id));
}

export const NODE_ID_SCHEMA = {
  type: 'string',
  minLength: 3,
  maxLength: 600,
  description: 'the node id, Label:key, e.g. Service:payments-api',
};
