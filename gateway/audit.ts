/**
 * The audit log's entry for a request: every mutating call (POST, PUT, PATCH,
 * DELETE) of a signed-in caller that succeeded, written once by the pipeline
 * rather than by each route. What it touched is read from the route pattern:
 * `/api-keys/:id/rotate` is action `rotate` on `api_key` `:id`; a POST to a
 * collection is a `create` whose id is the answer's `id`. A route says what
 * the pattern cannot (`audit: {kind, action}`), or `audit: false` when it is
 * not a change worth an entry; a POST that needs only a `:read` permission
 * (recall, Cypher reads, eval, validation) reads and is not audited. Policy
 * changes also reach the activity feed. Only ids go in: never a body.
 */
import type { ActivityRecorder } from '../domains/activity/record.js';
import type { Actor, ResourceRef } from '../domains/activity/types.js';
import type { AuthContext } from '../runtime/auth/context.js';
import type { HttpRequest } from './http.js';
import type { AnyRoute } from './route.js';

interface AuditedRequest {
  readonly route: AnyRoute;
  readonly auth: AuthContext;
  readonly request: HttpRequest;
  readonly params: unknown;
  readonly status: number;
  /** the JSON answer, when the handler answered JSON */
  readonly json: unknown;
}

const isParam = (segment: string): boolean => segment.startsWith(':');

/** `api-keys` -> `api_key`, `policies` -> `policy`, `settings` and `memory` stay */
function singular(segment: string): string {
  const name = segment.replaceAll('-', '_');
  if (name === 'settings' || name.endsWith('ss')) return name;
  if (name.endsWith('ies')) return `${name.slice(0, -3)}y`;
  return name.endsWith('s') ? name.slice(0, -1) : name;
}

/** the kind named by the static segment at `at`, prefixed by a static segment before it (`context/pipelines` -> `context_pipeline`) */
function kindAt(segments: readonly string[], at: number): string {
  const before = segments[at - 1];
  const prefix = before !== undefined && !isParam(before) ? `${singular(before)}_` : '';
  return `${prefix}${singular(segments[at] ?? 'resource')}`;
}

const paramOf = (params: unknown, name: string): string | null => {
  const value = params !== null && typeof params === 'object' ? (params as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : null;
};

const idOf = (json: unknown): string | null => (json !== null && typeof json === 'object' && 'id' in json && typeof json.id === 'string' ? json.id : null);

/** What a request did to what, from its route (pure: the answer gives a created resource's id). */
export function auditTarget(route: AnyRoute, params: unknown, json: unknown): { action: string; resource: ResourceRef; parent: ResourceRef | null } {
  let segments = route.path.split('/').filter((segment) => segment !== '');
  const last = segments.at(-1);
  let verb: string | null = null;
  // `/x/:id/rotate` is a verb on x; `/x/:id/tokens` (a plural) creates in a sub-collection
  if (route.method === 'POST' && last !== undefined && !isParam(last) && !last.endsWith('s') && isParam(segments.at(-2) ?? '')) {
    verb = last.replaceAll('-', '_');
    segments = segments.slice(0, -1);
  }
  let at = segments.length - 1;
  while (at >= 0 && isParam(segments[at] ?? '')) at -= 1;
  const kind = kindAt(segments, at);
  const idParam = segments[at + 1];
  const pathId = idParam !== undefined && isParam(idParam) ? paramOf(params, idParam.slice(1)) : null;
  const creates = route.method === 'POST' && verb === null && pathId === null;
  const action = verb ?? (route.method === 'DELETE' ? 'delete' : creates ? 'create' : 'update');
  const declared = route.audit === false ? undefined : route.audit;
  // a nested resource names its parent: `/context/pipelines/:id/tokens` -> the pipeline
  const parentParam = at > 0 ? segments[at - 1] : undefined;
  const parentId = parentParam !== undefined && isParam(parentParam) ? paramOf(params, parentParam.slice(1)) : null;
  return {
    action: declared?.action ?? action,
    resource: { kind: declared?.kind ?? kind, id: creates ? (idOf(json) ?? pathId) : pathId },
    parent: parentId === null ? null : { kind: kindAt(segments, at - 2), id: parentId },
  };
}

function actorOfAuth(auth: AuthContext, email: string | null): Actor {
  return auth.apiKeyId !== null ? { type: 'api_key', id: auth.apiKeyId, email: null } : { type: 'user', id: auth.userId, email };
}

/** a POST that needs only a read permission reads (recall, eval, validation) */
const readsOnly = (route: AnyRoute): boolean => route.auth === 'bearer' && route.permission?.endsWith(':read') === true;

const POLICY_KINDS = new Set(['policy', 'policy_source']);

export interface RequestAuditor {
  record(entry: AuditedRequest): Promise<void>;
}

export function createRequestAuditor(recorder: ActivityRecorder): RequestAuditor {
  return {
    async record({ route, auth, request, params, status, json }) {
      if (route.method === 'GET' || route.audit === false || (route.audit === undefined && readsOnly(route))) return;
      const { action, resource, parent } = auditTarget(route, params, json);
      const email = auth.apiKeyId === null ? (await recorder.userActor(auth.userId)).email : null;
      const actor = actorOfAuth(auth, email);
      const pattern = `${route.method} ${route.path}`;
      await recorder.audit(auth.orgId, {
        actor,
        action,
        resource,
        route: pattern,
        status,
        requestId: request.requestId,
        details: {
          ...(parent === null ? {} : { parent_kind: parent.kind, parent_id: parent.id }),
          // an API key acts for its creator: say who that is
          ...(auth.apiKeyId === null ? {} : { user_id: auth.userId }),
        },
      });
      if (POLICY_KINDS.has(resource.kind)) {
        await recorder.activity(auth.orgId, {
          kind: 'policy.changed',
          actor,
          subject: resource,
          summary: `${resource.kind.replace('_', ' ')} ${resource.id ?? ''} ${action}`.replace('  ', ' '),
          details: { action, route: pattern },
        });
      }
    },
  };
}
