/** What every vercel tool shares. */
import type { JsonSchema, ToolContext } from '../../contract.js';
import { VercelApi, vercelConfigOf } from '../config.js';

export function withVercel<T>(ctx: ToolContext, work: (api: VercelApi) => Promise<T>): Promise<T> {
  ctx.signal.throwIfAborted();
  return work(new VercelApi(vercelConfigOf(ctx.config), ctx.net));
}

export const PROJECT_ARG: JsonSchema = { type: 'string', minLength: 1, maxLength: 200, description: 'the project id (prj_...) or name' };
export const DEPLOYMENT_ARG: JsonSchema = { type: 'string', minLength: 1, maxLength: 300, description: 'the deployment id (dpl_...) or its URL host' };
export const limitArg = (defaultLimit: number, maximum: number): JsonSchema => ({
  type: 'integer',
  minimum: 1,
  maximum,
  default: defaultLimit,
  description: `how many at most (default ${defaultLimit})`,
});
