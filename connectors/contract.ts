/**
 * The connector plugin contract (version 1). A plugin is a plain object; the
 * loader checks it at start (kind, version, contract range, unique
 * `<kind>.<tool>` names, input schemas that compile) and refuses a bad one
 * with a message naming the plugin and the problem.
 *
 * Third-party authors import only this module (and the conformance kit).
 */

import type { Agent } from 'node:http';
import type { AgentOptions } from 'node:https';

export const CONTRACT_VERSION = 1;

/** JSON Schema (draft 2020-12) of an object */
export type JsonSchema = Record<string, unknown>;

export type ToolEffect = 'read' | 'write';

/**
 * How a connector reaches the network: the runtime's egress guard. Every call
 * to a URL taken from a source's config must go through it (loopback, private,
 * link-local and metadata addresses are refused unless the operator opens them
 * with EGRESS_ALLOW; redirects are judged hop by hop). A refusal throws a
 * ToolError `egress_refused` (directly, or as the `cause` an SDK wraps).
 */
export interface NetPort {
  /** a WHATWG fetch; give it to SDKs that take one (`fetch` / `request.fetch` options) */
  readonly fetch: typeof fetch;
  /** a node:http(s) Agent for clients built on node:http (axios, node-fetch); `options` carry TLS settings */
  agent(protocol: 'http:' | 'https:', options?: AgentOptions): Agent;
  /**
   * For drivers that open their own TCP sockets (database clients): the
   * address to connect to for `host`, resolved and judged by the guard (a
   * literal IP is judged as it is). Connect to the answer, not the name, so a
   * second DNS answer cannot slip past the check; give the name to TLS as the
   * servername. Throws the ToolError `egress_refused` when refused.
   */
  resolve(host: string): Promise<string>;
}

export interface ToolContext {
  readonly orgId: string;
  /** the source the tool runs for (null for built-in tools with no source) */
  readonly sourceId: string | null;
  /** the source's decrypted config, validated against the plugin's configSchema */
  readonly config: Readonly<Record<string, unknown>>;
  /** aborted when the run is cancelled or times out */
  readonly signal: AbortSignal;
  /** who the run acts for (a user or agent id), e.g. recorded as `created_by`; absent when unknown */
  readonly actorId?: string;
  /** the realm the run works in (graph and memory tools scope to it); absent: `default` */
  readonly realm?: string;
  /** the agent run the call belongs to (e.g. where `files.write_artifact` puts its files); absent outside runs (the `/mcp` server) */
  readonly runId?: string;
  /** the egress guard; the runtime always passes it (absent only when a plugin is driven directly, e.g. by the conformance kit: plain fetch then) */
  readonly net?: NetPort;
  /** the ports the plugin declared in `requires`, bound to this call's organization (and realm); read them with `portOf(ctx, name)` */
  readonly ports?: Ports;
}

const TOOL_ERROR_BRAND = Symbol.for('agent-context-service.ToolError');

/** What a tool may throw to give the model a readable failure (`error.code`). */
export class ToolError extends Error {
  readonly [TOOL_ERROR_BRAND] = true;

  constructor(
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ToolError';
  }

  /** works across copies of this module loaded from different npm installs */
  static is(value: unknown): value is ToolError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[TOOL_ERROR_BRAND] === true;
  }

  /** the value itself or the first ToolError in its `cause` chain (SDKs wrap what fetch threw, e.g. an egress refusal), else null */
  static within(value: unknown): ToolError | null {
    let current: unknown = value;
    for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
      if (ToolError.is(current)) return current;
      current = (current as { cause?: unknown }).cause;
    }
    return null;
  }
}

export interface ConnectorTool {
  /** lowercase snake_case; exposed to the model as `<kind>.<name>` */
  readonly name: string;
  /** what it does, when to use it, what it returns: the model chooses tools by this text */
  readonly description: string;
  readonly input_schema: JsonSchema;
  readonly effect: ToolEffect;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown>;
}

export interface ValidationResult {
  readonly ok: boolean;
  /** what is wrong, e.g. { missing_scopes: ['repo'] } */
  readonly details?: Record<string, unknown>;
  readonly message?: string;
}

export interface ConnectorPlugin {
  /** lowercase; the connector kind, e.g. `github` */
  readonly kind: string;
  /** the plugin's own semver */
  readonly version: string;
  /** contract versions it supports, e.g. `^1` */
  readonly contract: string;
  readonly description: string;
  readonly configSchema: JsonSchema;
  /** checks credentials against the real system; bad credentials fail here, not later */
  validate(config: Readonly<Record<string, unknown>>, signal: AbortSignal, net?: NetPort): Promise<ValidationResult>;
  readonly tools: readonly ConnectorTool[];
  /**
   * true when the tools need no source (no external system, no credentials,
   * e.g. `memory`): they are visible in every run and get `sourceId: null`
   * and `config: {}`. Default false: a tool is visible once per source of
   * this kind the run may see.
   */
  readonly sourceless?: boolean;
  /**
   * true when the tools act on the agent run that calls them (`files`: the
   * run's artifacts): catalogs built outside a run, like the /mcp server's,
   * leave them out. Default false.
   */
  readonly runOnly?: boolean;
  /**
   * ETL: reads the system and writes what it finds into the context graph
   * (repositories, services, builds, deployments, pods, owners). Optional:
   * a connector without it has live tools only.
   */
  sync?(ctx: SyncContext): Promise<SyncReport>;
  /**
   * Dynamic tools: for connectors whose tools are known only once a source is
   * configured (an MCP server, an OpenAPI document). Called when a run's
   * catalog is built, with the source's config; the answer is cached per
   * source for a short TTL (see domains/sources). The tools are checked like
   * static ones (a bad tool is dropped and logged, not fatal) and are exposed
   * as `<source name>.<tool>` instead of `<kind>.<tool>`. When present, these
   * replace `tools` for the source; `tools` may then be empty.
   */
  listTools?(config: Readonly<Record<string, unknown>>, signal: AbortSignal, net?: NetPort): Promise<readonly ConnectorTool[]>;
  /**
   * Which of the static `tools` one source exposes, by name, read from its
   * config (e.g. the media connector's `enabled_tools`). Default: all of them.
   * The others are not in that source's catalog at all.
   */
  visibleTools?(config: Readonly<Record<string, unknown>>): readonly string[];
  /**
   * The service's own stores the tools reach, by port name (see `PortTypes`):
   * the loader refuses the plugin when the host does not offer one of them,
   * and each tool call gets them in `ctx.ports`. Default none.
   */
  readonly requires?: readonly PortName[];

  /**
   * Lets go of what the plugin holds for one source (a connection pool):
   * called when the source is deleted or its config changes. Optional.
   */
  releaseSource?(sourceId: string): Promise<void>;
  /** Closes everything the plugin holds (pools, sessions); called once at shutdown. Optional. */
  close?(): Promise<void>;
  /** how the host's poller reads and cancels the tasks its tools start (handed over through the `media` port). Optional. */
  readonly jobs?: PlatformJobs;
  /** The source's files as documents for a RAG collection it feeds (`github`: Markdown files). A `version` changes with the content (a git blob sha): only changed documents are read. `truncated`: a limit left some out. Optional. */
  readonly documents?: {
    list(config: Readonly<Record<string, unknown>>, signal: AbortSignal, net?: NetPort): Promise<{ documents: SourceDocument[]; truncated: boolean }>;
    read(config: Readonly<Record<string, unknown>>, document: SourceDocument, signal: AbortSignal, net?: NetPort): Promise<Uint8Array>;
  };
}
/** one file of a source: `path` is unique in the source (the document's name), `metadata` what search filters match */
export type SourceDocument = { readonly path: string; readonly version: string; readonly metadata: Readonly<Record<string, string>> };

/** Where a task on the connector's system stands (`failure.code`: a tool-result code; outputs may expire). */
export interface PlatformTaskState {
  readonly status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  readonly progress: number;
  readonly outputs: readonly string[];
  readonly failure: { readonly code: string; readonly message: string } | null;
}

/** A connector's asynchronous tasks; ToolErrors, a retryable one (429, 5xx) with `details.retryable` and `retry_after_s`. */
export interface PlatformJobs {
  poll(config: Readonly<Record<string, unknown>>, taskId: string, signal: AbortSignal, net?: NetPort): Promise<PlatformTaskState>;
  cancel(config: Readonly<Record<string, unknown>>, taskId: string, signal: AbortSignal, net?: NetPort): Promise<void>;
}

/** A node written by a sync: `properties._key` is unique within the label (node id `Label:key`). */
export interface GraphNodeInput {
  readonly label: string;
  readonly properties: Readonly<Record<string, unknown>> & { readonly _key: string };
}

/** A relationship written by a sync, both ends named by label and key. */
export interface GraphRelationshipInput {
  readonly type: string;
  readonly from_label: string;
  readonly from_key: string;
  readonly to_label: string;
  readonly to_key: string;
  readonly properties?: Readonly<Record<string, unknown>>;
}

/** the code a GraphSink fails with: the graph refused the records (not the connector's system) */
export const GRAPH_WRITE_FAILED = 'graph_write_failed';

/** Where a sync writes what it found: the context graph, bound to the source's organization and realm. */
export interface GraphSink {
  /** upserts by (label, _key); one transaction per call */
  upsertNodes(nodes: readonly GraphNodeInput[]): Promise<void>;
  /** upserts by (type, from, to); missing end nodes are created with only their key */
  upsertRelationships(relationships: readonly GraphRelationshipInput[]): Promise<void>;
}

export interface SyncContext {
  readonly orgId: string;
  readonly sourceId: string;
  readonly realm: string;
  readonly config: Readonly<Record<string, unknown>>;
  readonly signal: AbortSignal;
  /** the graph, or null when no graph store is configured (the sync still reports what it saw) */
  readonly graph: GraphSink | null;
  /** the egress guard (see ToolContext.net) */
  readonly net?: NetPort;
  /** reports progress (0..1) with a short message; shown on the sync job */
  progress(fraction: number, message?: string): void;
}

export interface SyncReport {
  readonly nodes: number;
  readonly relationships: number;
  /** per-kind counts or notes, e.g. { repositories: 3, pull_requests: 12 } */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** What a plugin module may export instead of the plugin object (called once at load, no arguments). */
export type ConnectorPluginFactory = () => ConnectorPlugin | Promise<ConnectorPlugin>;

// ---------------------------------------------------------------------------
// Ports: the service's own stores a plugin may use, each declared in
// `requires` and handed to its tools bound to the calling organization (a
// port never reaches another organization). Failures a caller can fix are
// ToolErrors (e.g. `invalid_node_id`, `validation_error`).
// ---------------------------------------------------------------------------

/** A node of the context graph. */
export interface GraphNode {
  /** `Label:key` */
  readonly id: string;
  readonly label: string;
  readonly key: string;
  /** every set property, `_key` included (nulls left out) */
  readonly properties: Record<string, unknown>;
}

/** A relationship of the context graph, from -> to (node ids). */
export interface GraphRelationship {
  readonly type: string;
  readonly from: string;
  readonly to: string;
  readonly properties: Record<string, unknown>;
}

/** `graph`: read access to the context graph of the call's organization and realm. */
export interface GraphPort {
  /** full-text search over the string properties, best first; `total` counts every match before `limit` */
  search(options: {
    readonly query: string;
    readonly limit: number;
    readonly labels?: readonly string[] | undefined;
  }): Promise<{ items: (GraphNode & { score: number })[]; total: number }>;
  /** one node by id (`Label:key`; malformed: ToolError `invalid_node_id`); null when there is none */
  getNode(id: string): Promise<GraphNode | null>;
  /** the neighbourhood of a node, up to `depth` (1..5) hops; null when the node does not exist */
  expand(
    id: string,
    options: { readonly depth: number; readonly direction: 'both' | 'out' | 'in'; readonly types?: readonly string[] | undefined; readonly limit: number },
  ): Promise<{ nodes: GraphNode[]; relationships: GraphRelationship[] } | null>;
  /** a read-only Cypher query; writes, files, other databases and oversized params are refused (ToolError) */
  cypher(query: string, params: Record<string, unknown>): Promise<{ columns: string[]; rows: Record<string, unknown>[] }>;
}

/** A file in the organization's file store. */
export interface StoredFile {
  /** `/`-separated, relative to the organization's folder */
  readonly path: string;
  readonly size: number;
  readonly content_type: string;
  readonly modified_at: string;
}

/** `files`: the artifacts of agent runs (`artifacts/<run id>/<name>` in the organization's file store). */
export interface FilesPort {
  /** throws ToolError `validation_error` when `name` is not a relative path inside the run's folder */
  checkArtifactName(runId: string, name: string): void;
  /** writes (or replaces) one artifact; the content type follows the extension */
  writeArtifact(runId: string, name: string, content: Uint8Array): Promise<StoredFile>;
  /** the run's artifacts, by path */
  listArtifacts(runId: string): Promise<StoredFile[]>;
}

export const MEMORY_KINDS = ['fact', 'guideline', 'preference', 'note'] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];

/** An entry of the organization's memory. */
export interface MemoryEntry {
  readonly id: string;
  readonly kind: MemoryKind;
  readonly realm: string;
  readonly title: string | null;
  readonly text: string;
  readonly tags: string[];
  /** 0..1 */
  readonly importance: number;
  readonly created_at: string;
}

/** `memory`: the organization's memory entries. */
export interface MemoryPort {
  /** whether the organization has a realm of this name */
  realmExists(realm: string): Promise<boolean>;
  /** the best `limit` entries for the query, best first, ranked as `POST /memory/recall` ranks */
  recall(query: {
    readonly query: string;
    readonly realm?: string | undefined;
    readonly kind?: MemoryKind | undefined;
    readonly limit: number;
  }): Promise<{ entry: MemoryEntry; score: number }[]>;
  store(entry: {
    readonly kind: MemoryKind;
    readonly realm: string;
    readonly text: string;
    readonly title: string | null;
    readonly tags: string[];
    readonly importance: number;
    readonly created_by: string;
  }): Promise<MemoryEntry>;
}

/** An outbound webhook of the organization. */
interface OutboundWebhookRef {
  readonly id: string;
  readonly name: string;
}

/** One delivery of an outbound webhook and its attempts so far. */
export interface WebhookDelivery {
  readonly id: string;
  readonly status: 'queued' | 'in_flight' | 'delivered' | 'failed';
  readonly attempts: readonly { readonly status: number | null; readonly latency_ms: number; readonly error: string | null }[];
}

/** `webhooks`: the organization's outbound webhooks (signed, queued, retried). */
export interface WebhooksPort {
  /** by id, else by name; null when there is neither */
  find(ref: string): Promise<OutboundWebhookRef | null>;
  /** enqueues a delivery; answers after its first attempt or after `waitMs` (then still `queued`) */
  send(webhookId: string, message: { readonly event: string; readonly payload: unknown; readonly createdBy: string }, waitMs: number): Promise<WebhookDelivery>;
}

/** One chunk `rag.search` found: where it is from and why it ranked. */
interface RagHit {
  /** what an answer cites, e.g. `chk_42` */
  readonly chunk_id: string;
  readonly score: number;
  readonly collection: string;
  readonly document: string;
  readonly heading_path: readonly string[];
  readonly position: number;
  readonly text: string;
  readonly metadata: Readonly<Record<string, string>>;
}

/** `rag` (feature `rag`): hybrid search over the RAG collections of the call's realm. */
export interface RagPort {
  search(query: {
    readonly query: string;
    /** a collection id or name of the realm; absent: all of them */
    readonly collection?: string | undefined;
    readonly k: number;
    readonly filters?: Readonly<Record<string, string>> | undefined;
  }): Promise<RagHit[]>;
}

/** A durable media job (`media` port); outputs are copied into the file store, `artifact_id` null outside runs, `cost` in credits. */
export interface MediaJobView {
  readonly id: string;
  readonly task_id: string;
  readonly status: PlatformTaskState['status'];
  readonly progress: number;
  readonly cost: number | null;
  readonly outputs: readonly { readonly path: string; readonly artifact_id: string | null; readonly content_type: string; readonly size: number }[];
  readonly error: { readonly code: string; readonly message: string } | null;
}

/** `media`: durable jobs of tasks a tool started (polled by the host with the plugin's `jobs`, restart-safe, cancellable). */
export interface MediaJobsPort {
  track(job: {
    readonly sourceId: string;
    readonly runId: string | null;
    readonly tool: string;
    readonly taskId: string;
    readonly cost: number | null;
    readonly request: Readonly<Record<string, unknown>>;
  }): Promise<MediaJobView>;
  /** resolves when the job is finished; `signal` aborting stops the wait (ToolError `cancelled`), not the job */
  wait(jobId: string, signal: AbortSignal): Promise<MediaJobView>;
  get(jobId: string): Promise<MediaJobView | null>;
}

/** Every port, by the name a plugin lists in `requires`. */
export interface PortTypes {
  readonly graph: GraphPort;
  readonly files: FilesPort;
  readonly memory: MemoryPort;
  readonly webhooks: WebhooksPort;
  readonly rag: RagPort;
  readonly media: MediaJobsPort;
}

export type PortName = keyof PortTypes;
export const PORT_NAMES: readonly PortName[] = ['graph', 'files', 'memory', 'webhooks', 'rag', 'media'];

/** The ports one tool call gets: those its plugin requires. */
export type Ports = Partial<PortTypes>;

/** Whose data a port is bound to: the call's organization and realm (absent: `default`). */
export interface PortScope {
  readonly orgId: string;
  readonly realm?: string | undefined;
}

/** The ports a host offers, each a binder the host calls per tool call (the conformance kit takes fakes of these). */
export type PortOffers = { readonly [N in PortName]?: (scope: PortScope) => PortTypes[N] };

/** The port `name` of a tool call; throws ToolError `port_unavailable` when the plugin was driven without it. */
export function portOf<N extends PortName>(ctx: ToolContext, name: N): PortTypes[N] {
  const port = ctx.ports?.[name];
  if (port === undefined) throw new ToolError('port_unavailable', `this tool needs the "${name}" port, which this call was not given`);
  return port;
}
