/**
 * The catalog of permission strings and the built-in roles. A route names the
 * permission it needs; a caller without it gets 403 `forbidden`.
 */

export const PERMISSIONS = {
  'org:manage': 'change organization settings, invite and remove users, manage roles',
  'settings:read': 'read organization settings',
  'settings:manage': 'change organization settings',
  'user:read': 'list the users of the organization',
  'user:manage': 'invite users, change their roles, remove them',
  'role:read': 'list roles and the permission catalog',
  'role:manage': 'create, change and delete custom roles',
  'api_key:read': 'list API keys',
  'api_key:manage': 'create, rotate and revoke API keys',
  'realm:read': 'read realms',
  'realm:manage': 'create, change and delete realms',
  'agent:read': 'read agents and the agent-type catalog',
  'agent:manage': 'create, change and delete agents',
  'skill:read': 'read skills',
  'skill:manage': 'create, change and delete skills',
  'memory:read': 'read and recall memory',
  'memory:manage': 'create, change and delete memory entries',
  'source:read': 'read sources and their sync history',
  'source:manage': 'create, change, sync and delete sources',
  'graph:read': 'search and query the context graph',
  'graph:write': 'write nodes and relationships to the context graph',
  'graph:manage': "run graph maintenance (index rebuilds) on the context graph's realms (owner and admin)",
  'file:read': 'list and download files and artifacts',
  'file:write': 'upload and delete files and artifacts',
  'pipeline:read': 'read ingest pipelines and their runs',
  'pipeline:manage': 'create, change and delete ingest pipelines and their tokens',
  'task:read': 'read tasks and their runs',
  'task:manage': 'create, change, run, cancel and delete tasks',
  'webhook:read': 'read outbound webhooks, samples and deliveries',
  'webhook:manage': 'create, change and delete outbound webhooks and samples; replay deliveries',
  'chat:use': 'hold conversations with agents and answer approvals',
  'binding:read': 'read channels and bindings',
  'binding:manage': 'create, change and delete channels and bindings',
  'policy:read': 'read policies',
  'policy:manage': 'create, change and delete policies',
  'worker:read': 'read worker status',
  'runtime:read': 'list the actors the runtime supervises (operators: owner and admin)',
  'activity:read': "read the organization's activity feed (runs, approvals, deliveries, syncs, policy changes)",
  'audit:read': 'read the audit log: who changed what, logins, key rotations, policy denials (owner and admin)',
  'gateway:read': 'read gateways (external orchestration engines), their health and dispatches',
  'gateway:manage': 'create, change, test and delete gateways',
  'workflow:read': 'read orchestrator workflows and their runs',
  'workflow:manage': 'create, change, run, cancel and delete orchestrator workflows; answer their approval steps',
  'rag:read': 'list RAG collections and documents; search them',
  'rag:manage': 'create and delete RAG collections; add and delete their documents',
  'media:read': 'list and read media-generation jobs',
  'media:manage': 'cancel media-generation jobs',
  'voice:read': 'list voice sessions and read their records (transcripts, tool calls, metrics, cost)',
  'voice:manage': 'start and end voice sessions; answer their approvals',
} as const;

export type Permission = keyof typeof PERMISSIONS;

export const ALL_PERMISSIONS = Object.keys(PERMISSIONS) as Permission[];

export function isPermission(value: string): value is Permission {
  return Object.hasOwn(PERMISSIONS, value);
}

/**
 * What a permission brings with it, as users expect: changing a thing means
 * seeing it (`X:manage` and `X:write` imply `X:read` where that read exists).
 */
export function impliedBy(permission: Permission): Permission[] {
  const [resource, action] = permission.split(':') as [string, string];
  if (action !== 'manage' && action !== 'write') return [];
  const read = `${resource}:read`;
  return isPermission(read) ? [read] : [];
}

/** The permissions with everything they imply; what an auth context holds. */
export function withImplied(permissions: Iterable<Permission>): Set<Permission> {
  const all = new Set<Permission>();
  for (const permission of permissions) {
    all.add(permission);
    for (const implied of impliedBy(permission)) all.add(implied);
  }
  return all;
}

// runtime:read, audit:read and worker:read are operator views: owner and admin only, so members and viewers do not get them with the other reads
const OPERATOR_READS: readonly Permission[] = ['runtime:read', 'audit:read', 'worker:read'];
const READ_PERMISSIONS = ALL_PERMISSIONS.filter((permission) => permission.endsWith(':read') && !OPERATOR_READS.includes(permission));

export interface BuiltinRole {
  readonly name: string;
  readonly description: string;
  readonly permissions: readonly Permission[];
}

export const BUILTIN_ROLES: readonly BuiltinRole[] = [
  { name: 'owner', description: 'everything, including the organization itself', permissions: ALL_PERMISSIONS },
  {
    name: 'admin',
    description: 'everything except organization-level changes',
    permissions: ALL_PERMISSIONS.filter((permission) => permission !== 'org:manage'),
  },
  {
    name: 'member',
    description: 'uses agents, chat, memory and the graph; reads the rest',
    permissions: [
      ...READ_PERMISSIONS.filter((permission) => permission !== 'api_key:read'),
      'chat:use',
      'memory:manage',
      'graph:write',
      'file:write',
      'task:manage',
      'workflow:manage',
      'rag:manage',
      'media:manage',
      'voice:manage',
    ],
  },
  { name: 'viewer', description: 'reads everything, changes nothing', permissions: READ_PERMISSIONS },
];

/** What a pipeline-scoped token may do (intersected with its user's role): the command-line client's reach. */
export const PIPELINE_TOKEN_PERMISSIONS: readonly Permission[] = ['graph:read', 'graph:write', 'file:read', 'file:write'];

export const builtinRole = (name: string): BuiltinRole | undefined => BUILTIN_ROLES.find((role) => role.name === name);
