/**
 * References between resources, checked when a resource is saved (create and
 * update): a task's agent, realm and sources, a binding's agent and channel, a
 * channel's sources. One place answers them all, so every service refuses a
 * dangling or foreign id the same way: 400 `validation_error` whose issues name
 * each failing field (`enabled_source_ids.1`). Lookups go through the
 * organization's own collections, so another organization's id and an id that
 * never existed get the very same answer: existence never leaks across orgs.
 */
import type { AgentDoc } from '../domains/agents/documents.js';
import type { Collections } from './collections.js';
import { ServiceError } from '../runtime/errors.js';
import type { OrgId } from '../runtime/store/types.js';

/** One referenced value and where the caller put it (the issue path). */
interface Reference {
  readonly path: string;
  readonly value: string;
}

/** The references a save carries; leave out what the request does not set. */
export interface References {
  /** an agent's id or name */
  readonly agent?: Reference | undefined;
  /** a realm's name */
  readonly realm?: Reference | undefined;
  /** a chat channel's id */
  readonly channel?: Reference | undefined;
  /** source ids; each failing one is named by its index (`source_ids.1`) */
  readonly sources?: { readonly path: string; readonly ids: readonly string[] } | undefined;
}

/** What the references resolved to (only the ones given). */
export interface ResolvedReferences {
  readonly agent?: AgentDoc;
}

export type ReferenceCollections = Pick<Collections, 'agents' | 'realms' | 'channels' | 'sources'>;

interface Issue {
  readonly path: string;
  readonly message: string;
}

/**
 * Resolves every reference in `refs` within `org`; thrown (ServiceError
 * `validation_error`, every failing path in `details.issues`) when any does
 * not name a resource of this organization.
 */
export async function assertReferences(collections: ReferenceCollections, org: OrgId, refs: References): Promise<ResolvedReferences> {
  const issues: Issue[] = [];
  const resolved: { agent?: AgentDoc } = {};
  const { agent, realm, channel, sources } = refs;
  if (agent !== undefined) {
    const found = (await collections.agents.get(org, agent.value)) ?? (await collections.agents.findOne(org, { name: agent.value }));
    if (found) resolved.agent = found;
    else issues.push({ path: agent.path, message: `no agent "${agent.value}" in this organization` });
  }
  if (realm !== undefined && !(await collections.realms.findOne(org, { name: realm.value }))) {
    issues.push({ path: realm.path, message: `no realm "${realm.value}" in this organization` });
  }
  if (channel !== undefined && !(await collections.channels.get(org, channel.value))) {
    issues.push({ path: channel.path, message: `no channel "${channel.value}" in this organization` });
  }
  if (sources !== undefined && sources.ids.length > 0) {
    const unique = [...new Set(sources.ids)];
    const known = new Set((await collections.sources.findAll(org, { id: { in: unique } })).map((source) => source.id));
    sources.ids.forEach((id, index) => {
      if (!known.has(id)) issues.push({ path: `${sources.path}.${index}`, message: `no source "${id}" in this organization` });
    });
  }
  if (issues.length > 0) {
    const summary = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
    throw new ServiceError('validation_error', `invalid body: ${summary}`, { issues });
  }
  return resolved;
}
