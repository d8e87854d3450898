/**
 * The only module that reads `process.env`.
 *
 * raw environment -> defaults -> validated -> frozen. Every option is documented
 * in README.md with its default; contradictions are rejected at start with a
 * message naming the variable.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { DEFAULT_MAX_JSON_DEPTH } from './json-depth.js';
import type { PriceTable } from './llm/prices.js';
import { parseEgressAllow } from './net/egress.js';

export interface FeatureFlags {
  readonly rag: boolean;
  readonly workers: boolean;
  readonly orchestrator: boolean;
  readonly voice: boolean;
  readonly policies: boolean;
}

export interface ServiceConfig {
  readonly nodeEnv: string;
  readonly production: boolean;
  /** @default "127.0.0.1" */
  readonly host: string;
  /** @default 8080; 0 picks a free port */
  readonly port: number;
  /**
   * `PUBLIC_URL`: the service's address as senders reach it (scheme, host, optional path prefix; no
   * `/api/v1`), for the absolute webhook and Slack URLs shown to users.
   * @default null: the address the caller reached (its Host header), which is the listening address when called directly
   */
  readonly publicUrl: string | null;
  /** @default "./data" */
  readonly dataDir: string;
  /** @default "info" */
  readonly logLevel: string;
  readonly auth: {
    /** @default "local" */
    readonly provider: 'local' | 'oidc';
    readonly jwtSecret: Uint8Array;
    /** where the generated development secret lives, when one was generated or reused */
    readonly jwtSecretFile: string | null;
    /** @default 43200 (12 h) */
    readonly jwtTtlSeconds: number;
    readonly jwksUrl: string | null;
    readonly issuer: string | null;
    readonly audience: string | null;
    /** failed-login throttling (in memory, per process); a limit of 0 turns that side off */
    readonly loginThrottle: {
      /** `LOGIN_THROTTLE_ACCOUNT_FAILURES`: failures of one email per window before it is locked. @default 5 */
      readonly accountFailures: number;
      /** `LOGIN_THROTTLE_ADDRESS_FAILURES`: failures from one client address per window before it is locked. @default 20 */
      readonly addressFailures: number;
      /** `LOGIN_THROTTLE_WINDOW_SECS`: the counting window and the first lockout; each further lockout doubles. @default 900 */
      readonly windowSeconds: number;
    };
  };
  readonly workerToken: string | null;
  readonly features: FeatureFlags;
  /** @default 1048576 (1 MiB) */
  readonly webhookMaxBodyBytes: number;
  /** @default 30 */
  readonly webhookRetentionDays: number;
  /** first retry delay of outbound webhook deliveries; doubles per attempt, with jitter. @default 1000 ms */
  readonly webhookRetryBaseMs: number;
  /** `ACTIVITY_RETENTION_DAYS`: how long the activity feed, the audit log and notifications keep an entry. @default 90 */
  readonly activityRetentionDays: number;
  /** @default 8000000 (8 MB) */
  readonly contextIngestMaxBytes: number;
  /** `GRAPH_IMPORT_MAX_BYTES`: the largest POST /graph/import body (streamed to a spool, so a disk quota, not memory). @default 1073741824 (1 GiB) */
  readonly graphImportMaxBytes: number;
  /** `MAX_JSON_DEPTH`: how deep arrays/objects may nest in a JSON body or an NDJSON line, checked before parsing. @default 64 */
  readonly maxJsonDepth: number;
  /** @default 300 seconds */
  readonly workerLeaseTtlSeconds: number;
  readonly mongodbUrl: string | null;
  readonly graphUrl: string | null;
  readonly natsUrl: string | null;
  /** `NATS_STREAM_PREFIX`: the prefix of the job streams and subjects, so services sharing a NATS server keep their queues apart */
  readonly natsStreamPrefix: string;
  /** `LLM_API_KEY`: the operator's key; sent only to `llmBaseUrl` (or the provider's official API when that is null) */
  readonly llmApiKey: string | null;
  /** `LLM_BASE_URL`: the operator's endpoint for organizations without their own `llm_base_url`. @default null: the provider's official API */
  readonly llmBaseUrl: string | null;
  /** `EMBEDDING_BASE_URL`: the operator's OpenAI-compatible `/embeddings` endpoint (feature `rag`). @default null: the LLM endpoint */
  readonly embeddingBaseUrl: string | null;
  /** `EMBEDDING_API_KEY`: the operator's key for `embeddingBaseUrl`, sent nowhere else. @default null */
  readonly embeddingApiKey: string | null;
  /**
   * `LLM_PRICES`: JSON `{ "<model>": { "input_per_mtok": n, "output_per_mtok": n } }` (USD per
   * million tokens), added to or overriding the built-in table of runtime/llm/prices.ts.
   * @default {}
   */
  readonly llmPrices: PriceTable;
  /** `AGENT_RUN_TIMEOUT_SECS`: a run still going after this fails with reason `timeout`. @default 600 */
  readonly agentRunTimeoutSecs: number;
  /** `AGENT_PARK_AFTER_MS`: a run idle this long in an approval wait is persisted and its actor stopped (parked). @default 5000 */
  readonly agentParkAfterMs: number;
  /** media jobs: `MEDIA_POLL_BASE_MS` first poll delay (@default 2000, doubling with jitter up to `MEDIA_POLL_MAX_MS`, @default 30000); `MEDIA_JOB_TIMEOUT_SECS` (@default 1800) */
  readonly media: { readonly pollBaseMs: number; readonly pollMaxMs: number; readonly jobTimeoutMs: number };
  /** `CHAT_COST_CAP_USD_PER_DAY`: an organization's daily LLM spend on chat above which replies fail with `cost_cap_exceeded`. @default null (no cap) */
  readonly chatCostCapUsdPerDay: number | null;
  /** `SHUTDOWN_GRACE_SECS`: how long shutdown waits for runs to reach a safe point before stopping them. @default 10 */
  readonly shutdownGraceSecs: number;
  /** `SHUTDOWN_DEADLINE_SECS`: after a stop signal the process exits (code 1, logged) by then whatever is still closing. @default SHUTDOWN_GRACE_SECS + 20 */
  readonly shutdownDeadlineSecs: number;
  /** @default "<DATA_DIR>/context.duckdb" */
  readonly contextDbPath: string;
  /** @default "<DATA_DIR>/files" */
  readonly filesDir: string;
  /** `SOURCE_CONFIG_KEY` (at least 32 characters): root of the key that encrypts source configs at rest. @default null: derived from JWT_SECRET */
  readonly sourceConfigKey: Uint8Array | null;
  /** `PLUGINS_FILE`: the plugins.json to load. @default null: "./plugins.json" of the working directory (missing = no extra plugins) */
  readonly pluginsFile: string | null;
  /** `MCP_STDIO_COMMANDS`: commands an `mcp` source may start over stdio (comma-separated; `*` = any). @default [] (stdio MCP sources refused) */
  readonly mcpStdioCommands: readonly string[];
  /** `KUBERNETES_IN_CLUSTER`: whether a `kubernetes` source may use `auth.kind: in_cluster`, i.e. this service's own pod service account, for any tenant. @default false */
  readonly kubernetesInCluster: boolean;
  /** `POLICY_GIT_ALLOW_LOCAL`: whether a policy source's git_url may be `file://` or an absolute local path (tests, single-tenant setups). @default false */
  readonly policyGitAllowLocal: boolean;
  /** `FILES_MAX_UPLOAD_BYTES`: largest file one upload may carry (413 over it, detected while reading). @default 104857600 (100 MiB) */
  readonly filesMaxUploadBytes: number;
  /**
   * `PLATFORM_OPERATORS`: emails (comma-separated, compared lowercased) of the users who may call the
   * platform-wide operator routes (`/platform/users`). @default [] (nobody)
   */
  readonly platformOperators: readonly string[];
  /**
   * `EGRESS_ALLOW`: host names and CIDR ranges (IPv4, IPv6) that outbound calls made for a tenant
   * (webhooks, sources, MCP servers, tenant LLM URLs) may reach although they are loopback,
   * private, link-local or metadata addresses (comma-separated). @default [] (all such refused)
   */
  readonly egressAllow: readonly string[];
  /** `GATEWAY_HEALTH_INTERVAL_SECS`: how often every gateway (external orchestration engine) is probed. @default 60 */
  readonly gatewayHealthIntervalSecs: number;
  /** the WebSocket change feed at `/ws` (see README, Live feeds) */
  readonly wsFeed: {
    /** `WS_FEED_RETAIN_EVENTS`: events kept per organization for resuming clients. @default 10000 */
    readonly retainEvents: number;
    /** `WS_FEED_RETAIN_SECS`: how long an event is kept for resuming clients. @default 3600 */
    readonly retainSeconds: number;
    /** `WS_FEED_MAX_BUFFERED_BYTES`: a connection with more unsent bytes is closed (4008). @default 1048576 */
    readonly maxBufferedBytes: number;
    /** `WS_AUTH_TIMEOUT_MS`: how long a connection may stay unauthenticated (then 4401). @default 5000 */
    readonly authTimeoutMs: number;
  };
  /** `INGEST_WORKER_MIN_BYTES`: with feature `workers`, ingest bodies this large or larger are queued for a worker (202). @default 4194304 (4 MiB) */
  readonly ingestWorkerMinBytes: number;
  /** `VOICE_MODEL`: the realtime model of voice sessions (feature `voice`). @default "gpt-realtime" */
  readonly voiceModel: string;
  /**
   * `VOICE_PROVIDER_CA_FILE`: a PEM file of extra certificate authorities trusted (beside the
   * system's) for the voice provider's wss: connection; for tests and private gateways. @default null
   */
  readonly voiceProviderCaFile: string | null;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/** a JetStream stream-name prefix: letters, digits, `_` and `-` (stream names allow no `.`, `*`, `>` or spaces) */
function streamPrefix(env: Env, name: string): string {
  const raw = text(env, name) ?? 'acs';
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(raw)) throw new ConfigError(name, `must be 1 to 32 letters, digits, "_" or "-", got "${raw}"`);
  return raw;
}

function text(env: Env, name: string): string | null {
  const value = env[name];
  return value === undefined || value.trim() === '' ? null : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function flag(env: Env, name: string): boolean {
  const raw = text(env, name);
  if (raw === null) return false;
  const lowered = raw.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(lowered)) return true;
  if (['false', '0', 'no', 'off'].includes(lowered)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function url(env: Env, name: string, protocols: readonly string[]): string | null {
  const raw = text(env, name);
  if (raw === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `is not a valid URL: "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw;
}

/** `PUBLIC_URL`: http(s), no query or fragment (paths are appended to it), no trailing slash. */
function publicUrl(env: Env): string | null {
  const raw = url(env, 'PUBLIC_URL', ['http:', 'https:']);
  if (raw === null) return null;
  const parsed = new URL(raw);
  if (parsed.search !== '' || parsed.hash !== '') throw new ConfigError('PUBLIC_URL', `must not have a query or fragment, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

/** Comma-separated emails, trimmed and lowercased (as identity stores them); thrown on an entry that is not an email. */
function emailList(env: Env, name: string): readonly string[] {
  const entries = (text(env, name) ?? '')
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    if (!z.string().email().safeParse(entry).success) throw new ConfigError(name, `"${entry}" is not an email address`);
  }
  return Object.freeze([...new Set(entries)]);
}

const PRICE_TABLE = z.record(
  z.string().trim().min(1, 'a model name is empty'),
  z.strictObject({ input_per_mtok: z.number().nonnegative(), output_per_mtok: z.number().nonnegative() }),
);

function priceTable(env: Env, name: string): PriceTable {
  const raw = text(env, name);
  if (raw === null) return Object.freeze({});
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError(name, 'is not valid JSON');
  }
  const result = PRICE_TABLE.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? '' : ` at "${issue.path.join('.')}"`;
    throw new ConfigError(
      name,
      `must be a JSON object {"<model>": {"input_per_mtok": n, "output_per_mtok": n}} (USD per million tokens, n >= 0); ${issue?.message ?? 'invalid'}${where}`,
    );
  }
  return Object.freeze(result.data);
}

function costCap(env: Env, name: string): number | null {
  const raw = text(env, name);
  if (raw === null) return null;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new ConfigError(name, `must be a non-negative number of USD, got "${raw}"`);
  return value;
}

const MIN_SECRET_BYTES = 32;

function sourceConfigKey(env: Env): Uint8Array | null {
  const raw = text(env, 'SOURCE_CONFIG_KEY');
  if (raw === null) return null;
  if (raw.length < MIN_SECRET_BYTES) throw new ConfigError('SOURCE_CONFIG_KEY', `must be at least ${MIN_SECRET_BYTES} characters`);
  return new TextEncoder().encode(raw);
}

function egressAllow(env: Env): readonly string[] {
  const entries = (text(env, 'EGRESS_ALLOW') ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  try {
    parseEgressAllow(entries);
  } catch (error) {
    throw new ConfigError('EGRESS_ALLOW', `${(error as Error).message}; expected comma-separated host names, IP addresses and CIDR ranges`);
  }
  return Object.freeze(entries);
}

function pluginsFile(env: Env): string | null {
  const raw = text(env, 'PLUGINS_FILE');
  return raw === null ? null : resolve(raw);
}

/** Development only: a random secret kept in DATA_DIR so tokens survive restarts. */
function developmentSecret(dataDir: string): { secret: Uint8Array; file: string } {
  const file = join(dataDir, 'jwt-secret');
  if (existsSync(file)) {
    const stored = readFileSync(file, 'utf8').trim();
    if (stored.length >= MIN_SECRET_BYTES) return { secret: new TextEncoder().encode(stored), file };
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const generated = randomBytes(48).toString('base64url');
  writeFileSync(file, generated + '\n', { mode: 0o600 });
  return { secret: new TextEncoder().encode(generated), file };
}

/** Builds the frozen configuration from an environment (process.env by default). */
export function loadConfig(env: Env = process.env): ServiceConfig {
  const nodeEnv = text(env, 'NODE_ENV') ?? 'development';
  const production = nodeEnv === 'production';
  const dataDir = resolve(text(env, 'DATA_DIR') ?? './data');
  const shutdownGraceSecs = integer(env, 'SHUTDOWN_GRACE_SECS', 10, 0, 3600);

  const providerRaw = (text(env, 'AUTH_PROVIDER') ?? 'local').toLowerCase();
  if (providerRaw !== 'local' && providerRaw !== 'oidc') {
    throw new ConfigError('AUTH_PROVIDER', `must be "local" or "oidc", got "${providerRaw}"`);
  }
  const jwksUrl = url(env, 'JWKS_URL', ['http:', 'https:']);
  const issuer = text(env, 'JWT_ISSUER');
  const audience = text(env, 'JWT_AUDIENCE');
  if (providerRaw === 'oidc') {
    if (jwksUrl === null) throw new ConfigError('JWKS_URL', 'is required when AUTH_PROVIDER=oidc');
    if (issuer === null) throw new ConfigError('JWT_ISSUER', 'is required when AUTH_PROVIDER=oidc');
    if (audience === null) throw new ConfigError('JWT_AUDIENCE', 'is required when AUTH_PROVIDER=oidc');
  }

  let jwtSecret: Uint8Array;
  let jwtSecretFile: string | null = null;
  const secretRaw = text(env, 'JWT_SECRET');
  if (secretRaw !== null) {
    if (secretRaw.length < MIN_SECRET_BYTES) {
      throw new ConfigError('JWT_SECRET', `must be at least ${MIN_SECRET_BYTES} characters`);
    }
    jwtSecret = new TextEncoder().encode(secretRaw);
  } else if (production) {
    throw new ConfigError('JWT_SECRET', 'is required when NODE_ENV=production');
  } else {
    const generated = developmentSecret(dataDir);
    jwtSecret = generated.secret;
    jwtSecretFile = generated.file;
  }

  const logLevel = (text(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `unknown level "${logLevel}"`);
  }

  const config: ServiceConfig = {
    nodeEnv,
    production,
    host: text(env, 'HOST') ?? '127.0.0.1',
    port: integer(env, 'PORT', 8080, 0, 65535),
    publicUrl: publicUrl(env),
    dataDir,
    logLevel,
    auth: {
      provider: providerRaw,
      jwtSecret,
      jwtSecretFile,
      jwtTtlSeconds: integer(env, 'JWT_TTL_SECONDS', 43_200, 60, 30 * 86_400),
      jwksUrl,
      issuer,
      audience,
      loginThrottle: Object.freeze({
        accountFailures: integer(env, 'LOGIN_THROTTLE_ACCOUNT_FAILURES', 5, 0, 1000),
        addressFailures: integer(env, 'LOGIN_THROTTLE_ADDRESS_FAILURES', 20, 0, 100_000),
        windowSeconds: integer(env, 'LOGIN_THROTTLE_WINDOW_SECS', 900, 1, 86_400),
      }),
    },
    workerToken: text(env, 'WORKER_TOKEN'),
    features: Object.freeze({
      rag: flag(env, 'SERVICE_FEATURES_RAG'),
      workers: flag(env, 'SERVICE_FEATURES_WORKERS'),
      orchestrator: flag(env, 'SERVICE_FEATURES_ORCHESTRATOR'),
      voice: flag(env, 'SERVICE_FEATURES_VOICE'),
      policies: flag(env, 'SERVICE_FEATURES_POLICIES'),
    }),
    webhookMaxBodyBytes: integer(env, 'WEBHOOK_MAX_BODY_BYTES', 1_048_576, 1, 1_073_741_824),
    webhookRetentionDays: integer(env, 'WEBHOOK_RETENTION_DAYS', 30, 1, 3650),
    webhookRetryBaseMs: integer(env, 'WEBHOOK_RETRY_BASE_MS', 1000, 1, 600_000),
    activityRetentionDays: integer(env, 'ACTIVITY_RETENTION_DAYS', 90, 1, 3650),
    contextIngestMaxBytes: integer(env, 'CONTEXT_INGEST_MAX_BYTES', 8_000_000, 1, 1_073_741_824),
    graphImportMaxBytes: integer(env, 'GRAPH_IMPORT_MAX_BYTES', 1_073_741_824, 1, 2 ** 40),
    // past ~1,000 the recursive walks after parsing (zod, stringify, DuckDB) near the stack limit again
    maxJsonDepth: integer(env, 'MAX_JSON_DEPTH', DEFAULT_MAX_JSON_DEPTH, 1, 1000),
    workerLeaseTtlSeconds: integer(env, 'WORKER_LEASE_TTL', 300, 1, 86_400),
    mongodbUrl: url(env, 'MONGODB_URL', ['mongodb:', 'mongodb+srv:']),
    graphUrl: url(env, 'GRAPH_URL', ['bolt:', 'neo4j:', 'bolt+s:', 'neo4j+s:']),
    natsUrl: url(env, 'NATS_URL', ['nats:', 'tls:']),
    natsStreamPrefix: streamPrefix(env, 'NATS_STREAM_PREFIX'),
    llmApiKey: text(env, 'LLM_API_KEY'),
    llmBaseUrl: url(env, 'LLM_BASE_URL', ['http:', 'https:']),
    embeddingBaseUrl: url(env, 'EMBEDDING_BASE_URL', ['http:', 'https:']),
    embeddingApiKey: text(env, 'EMBEDDING_API_KEY'),
    llmPrices: priceTable(env, 'LLM_PRICES'),
    agentRunTimeoutSecs: integer(env, 'AGENT_RUN_TIMEOUT_SECS', 600, 1, 86_400),
    agentParkAfterMs: integer(env, 'AGENT_PARK_AFTER_MS', 5000, 0, 86_400_000),
    media: Object.freeze({
      pollBaseMs: integer(env, 'MEDIA_POLL_BASE_MS', 2000, 1, 600_000),
      pollMaxMs: integer(env, 'MEDIA_POLL_MAX_MS', 30_000, 1, 3_600_000),
      jobTimeoutMs: integer(env, 'MEDIA_JOB_TIMEOUT_SECS', 1800, 1, 86_400) * 1000,
    }),
    chatCostCapUsdPerDay: costCap(env, 'CHAT_COST_CAP_USD_PER_DAY'),
    shutdownGraceSecs,
    shutdownDeadlineSecs: integer(env, 'SHUTDOWN_DEADLINE_SECS', shutdownGraceSecs + 20, 1, 7200),
    contextDbPath: resolve(text(env, 'CONTEXT_DB_PATH') ?? join(dataDir, 'context.duckdb')),
    filesDir: resolve(text(env, 'FILES_DIR') ?? join(dataDir, 'files')),
    sourceConfigKey: sourceConfigKey(env),
    pluginsFile: pluginsFile(env),
    mcpStdioCommands: Object.freeze(
      (text(env, 'MCP_STDIO_COMMANDS') ?? '')
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ''),
    ),
    kubernetesInCluster: flag(env, 'KUBERNETES_IN_CLUSTER'),
    policyGitAllowLocal: flag(env, 'POLICY_GIT_ALLOW_LOCAL'),
    filesMaxUploadBytes: integer(env, 'FILES_MAX_UPLOAD_BYTES', 104_857_600, 1, 4_294_967_296),
    platformOperators: emailList(env, 'PLATFORM_OPERATORS'),
    egressAllow: egressAllow(env),
    gatewayHealthIntervalSecs: integer(env, 'GATEWAY_HEALTH_INTERVAL_SECS', 60, 1, 86_400),
    wsFeed: Object.freeze({
      retainEvents: integer(env, 'WS_FEED_RETAIN_EVENTS', 10_000, 1, 1_000_000),
      retainSeconds: integer(env, 'WS_FEED_RETAIN_SECS', 3600, 1, 604_800),
      maxBufferedBytes: integer(env, 'WS_FEED_MAX_BUFFERED_BYTES', 1_048_576, 65_536, 1_073_741_824),
      authTimeoutMs: integer(env, 'WS_AUTH_TIMEOUT_MS', 5000, 50, 60_000),
    }),
    ingestWorkerMinBytes: integer(env, 'INGEST_WORKER_MIN_BYTES', 4_194_304, 1, 2 ** 40),
    voiceModel: text(env, 'VOICE_MODEL') ?? 'gpt-realtime',
    voiceProviderCaFile: text(env, 'VOICE_PROVIDER_CA_FILE'),
  };
  if (config.workerToken !== null && config.workerToken.length < 16) {
    throw new ConfigError('WORKER_TOKEN', 'must be at least 16 characters');
  }
  return Object.freeze(config);
}
