/**
 * The error catalogue: every `snake_case` code the API answers with, its HTTP
 * status, its fault class and when it is thrown. Anything that fails a request
 * throws a `ServiceError` built from this table; the gateway turns it into the
 * envelope `{"error":{"code","message","details?"}}`.
 */

/** Who is at fault: drives retry decisions (never parse message text). */
export type Fault = 'user' | 'system' | 'third_party';

interface CatalogEntry {
  readonly status: number;
  readonly fault: Fault;
  readonly retryable: boolean;
  /** thrown when */
  readonly when: string;
}

export const ERROR_CATALOG = {
  validation_error: { status: 400, fault: 'user', retryable: false, when: 'a body, query or path parameter fails its schema' },
  invalid_json: { status: 400, fault: 'user', retryable: false, when: 'the request body is not valid JSON' },
  invalid_cursor: {
    status: 400,
    fault: 'user',
    retryable: false,
    when: 'a pagination cursor was not issued by this server for this organization and list, or was altered',
  },
  immutable_field: { status: 400, fault: 'user', retryable: false, when: 'an update tries to change a field that is fixed at creation' },
  organization_required: { status: 400, fault: 'user', retryable: false, when: 'a user of several organizations logs in without choosing one' },
  unauthorized: { status: 401, fault: 'user', retryable: false, when: 'a protected route is called without valid credentials' },
  invalid_credentials: { status: 401, fault: 'user', retryable: false, when: 'login with an unknown email or a wrong password' },
  token_expired: { status: 401, fault: 'user', retryable: false, when: 'a bearer token is past its expiry' },
  api_key_revoked: {
    status: 401,
    fault: 'user',
    retryable: false,
    when: 'an API key was revoked or has expired, or its creator is no longer a member of the organization',
  },
  forbidden: { status: 403, fault: 'user', retryable: false, when: 'the caller lacks the permission a route needs' },
  not_found: { status: 404, fault: 'user', retryable: false, when: 'a route or resource does not exist, or belongs to another organization' },
  method_not_allowed: { status: 405, fault: 'user', retryable: false, when: 'the path exists but not with this method' },
  conflict: { status: 409, fault: 'user', retryable: false, when: 'a unique name is taken, or the state forbids the change' },
  idempotency_key_reused: { status: 409, fault: 'user', retryable: false, when: 'an Idempotency-Key is reused with a different request body' },
  idempotency_in_progress: { status: 409, fault: 'user', retryable: true, when: 'a request with the same Idempotency-Key is still being processed' },
  payload_too_deep: {
    status: 400,
    fault: 'user',
    retryable: false,
    when: 'a JSON body nests arrays/objects deeper than MAX_JSON_DEPTH (checked on the raw bytes before parsing; details.max_depth)',
  },
  payload_too_large: { status: 413, fault: 'user', retryable: false, when: 'a request body is over the route limit' },
  unsupported_media_type: { status: 415, fault: 'user', retryable: false, when: 'a body is sent with a content type the route does not read' },
  source_validation_failed: {
    status: 422,
    fault: 'third_party',
    retryable: false,
    when: 'an upstream system rejects a source configuration (bad credentials, missing scopes)',
  },
  rate_limited: { status: 429, fault: 'user', retryable: true, when: 'a caller is over its rate; Retry-After says when to come back' },
  internal_error: { status: 500, fault: 'system', retryable: true, when: 'an unexpected exception; logged with the request id' },
  service_unavailable: { status: 503, fault: 'system', retryable: true, when: 'a dependency (store, sidecar, engine) is down or shutting down' },
  feature_disabled: { status: 404, fault: 'user', retryable: false, when: 'a route belongs to a subsystem whose feature flag is off' },
  bad_ndjson: {
    status: 400,
    fault: 'user',
    retryable: false,
    when: 'an ingest body line is not a JSON object (details.line is the 1-based line), or the body has no rows',
  },
  unknown_token: { status: 401, fault: 'user', retryable: false, when: 'an ingest token was revoked or never existed' },
  bad_signature: {
    status: 401,
    fault: 'user',
    retryable: false,
    when: 'a pipeline or webhook trigger requires signatures and X-Service-Signature is missing or does not match the body (or its signed timestamp is outside the tolerance)',
  },
  table_not_found: {
    status: 404,
    fault: 'user',
    retryable: false,
    when: 'a context table does not exist (ingest with X-Auto-Create: false, or a read of a table never written)',
  },
  // 422, not 503: nothing is down and retrying will not help until someone sets llm_provider/llm_model in /settings and LLM_API_KEY; the request is valid but the organization cannot serve it yet
  llm_unconfigured: {
    status: 422,
    fault: 'user',
    retryable: false,
    when: 'chat or a run needs a model but the organization has no llm_provider/llm_model, or its own llm_base_url has no llm_api_key (or one that no longer opens), or it uses the operator endpoint and the server has no LLM_API_KEY',
  },
  engine_unavailable: {
    status: 503,
    fault: 'system',
    retryable: true,
    when: 'the context tables engine (DuckDB) refuses work, e.g. its file is locked by another process; retry with backoff',
  },
  kql_error: {
    status: 400,
    fault: 'user',
    retryable: false,
    when: 'a KQL query (POST /context/kql) does not parse, names something unknown, or uses a construct the translation does not support (details: line, column, code)',
  },
  advanced_tier_required: {
    status: 403,
    fault: 'user',
    retryable: false,
    when: "KQL over context tables is the Advanced tier: the organization's setting context_tier is basic",
  },
  query_timeout: { status: 422, fault: 'user', retryable: false, when: 'a context query ran longer than its timeout_ms and was interrupted' },
  invalid_node_id: { status: 400, fault: 'user', retryable: false, when: 'a graph node id is not of the form Label:key (URL-encoded), e.g. Service:payments' },
  egress_refused: {
    status: 422,
    fault: 'user',
    retryable: false,
    when: 'a URL given for an outbound call (webhook, source, MCP server, LLM base URL) points at a loopback, private, link-local or metadata address that EGRESS_ALLOW does not open (details.address_class)',
  },
  cypher_syntax_error: {
    status: 400,
    fault: 'user',
    retryable: false,
    when: "a Cypher query does not parse or bind; the message is the engine's (parser, binder and catalog errors)",
  },
  policy_denied: {
    status: 403,
    fault: 'user',
    retryable: false,
    when: 'an organization policy denies a tool call (a tool result the model reads; details.messages are the deny messages)',
  },
  rego_parse_error: {
    status: 400,
    fault: 'user',
    retryable: false,
    when: 'POST /policies/eval: a query or module does not parse (the message gives line and column)',
  },
  rego_compile_error: {
    status: 400,
    fault: 'user',
    retryable: false,
    when: 'POST /policies/eval: a module does not compile (a var assigned twice, a bad rule head)',
  },
  rego_type_error: {
    status: 400,
    fault: 'user',
    retryable: false,
    when: 'POST /policies/eval: an unknown function, a built-in called with the wrong arity, conflicting rule kinds',
  },
  rego_unsafe_var_error: { status: 400, fault: 'user', retryable: false, when: 'POST /policies/eval: a variable is never bound (unsafe)' },
  rego_recursion_error: { status: 400, fault: 'user', retryable: false, when: 'POST /policies/eval: rules or functions refer to themselves' },
  eval_conflict_error: {
    status: 400,
    fault: 'user',
    retryable: false,
    when: 'POST /policies/eval: a complete rule, function or object key has several values',
  },
  eval_type_error: {
    status: 400,
    fault: 'user',
    retryable: false,
    when: 'POST /policies/eval: an operation on a value of the wrong type (with strict_builtin_errors)',
  },
  eval_builtin_error: {
    status: 400,
    fault: 'user',
    retryable: false,
    when: 'POST /policies/eval: a built-in fails (with strict_builtin_errors) or is not supported by this engine',
  },
  eval_cancel_error: { status: 400, fault: 'user', retryable: false, when: 'POST /policies/eval: the evaluation ran past its time budget' },
  sync_in_progress: { status: 409, fault: 'user', retryable: true, when: 'POST /policies/sources/:id/sync while a sync of the same source is still running' },
  policy_sync_failed: {
    status: 422,
    fault: 'user',
    retryable: false,
    when: 'a policy source sync could not fetch the repository or a module does not compile (details.errors with file, line, column); the previous bundle stays active',
  },
  rego_file_unresolved: {
    status: 422,
    fault: 'user',
    retryable: false,
    when: "a policy's rego_file names no module of a synced policy source (`<source name>/<path>`) nor a file of the organization",
  },
  lease_lost: {
    status: 409,
    fault: 'user',
    retryable: false,
    when: "a worker renews, completes or fails a job with a fence that is no longer the job's current delivery (its lease lapsed and the job went to another worker)",
  },
  worker_unavailable: { status: 503, fault: 'system', retryable: true, when: 'feature workers is on and no live worker serves the queue this work needs' },
  sidecar_unavailable: {
    status: 503,
    fault: 'system',
    retryable: true,
    when: 'an external orchestration engine (a gateway) is down or refused the dispatch at the transport level',
  },
  embedding_failed: {
    status: 503,
    fault: 'system',
    retryable: true,
    when: "the embeddings endpoint (EMBEDDING_BASE_URL, LLM_BASE_URL or the organization's llm_base_url) refused or failed a /rag request after the retries",
  },
  embedding_dimension_mismatch: {
    status: 422,
    fault: 'user',
    retryable: false,
    when: "the embedding model answered vectors of another dimension than the collection's (fixed at creation)",
  },
  cost_cap_exceeded: {
    status: 429,
    fault: 'user',
    retryable: false,
    when: "a voice session is started while the organization's daily LLM spend (CHAT_COST_CAP_USD_PER_DAY) is already reached",
  },
  rag_sync_failed: {
    status: 422,
    fault: 'third_party',
    retryable: false,
    when: "POST /rag/collections/:id/sync: the collection's source refused or failed a listing or a read (details.reason: the connector's code, e.g. unauthorized)",
  },
} as const satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export class ServiceError extends Error {
  readonly status: number;
  readonly fault: Fault;
  readonly retryable: boolean;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Readonly<Record<string, unknown>>,
    headers: Readonly<Record<string, string>> = {},
  ) {
    // an answer to the caller, not a crash: skip the stack capture, the costliest part of an Error
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'ServiceError';
    const entry: CatalogEntry = ERROR_CATALOG[code];
    this.status = entry.status;
    this.fault = entry.fault;
    this.retryable = entry.retryable;
    this.headers = headers;
  }

  toEnvelope(): { error: { code: string; message: string; details?: Readonly<Record<string, unknown>> } } {
    return this.details === undefined
      ? { error: { code: this.code, message: this.message } }
      : { error: { code: this.code, message: this.message, details: this.details } };
  }
}

export const conflict = (message: string, details?: Record<string, unknown>): ServiceError => new ServiceError('conflict', message, details);
