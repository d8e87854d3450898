/**
 * The connector plugin contract (version 1). A plugin is a plain object; the
 * loader checks it at start (kind, version, contract range, unique
 * `<kind>.<tool>` names, input schemas that compile) and refuses a bad one
 * with a message naming the plugin and the problem.
 *
 * Third-party authors import only this module (and the conformance kit).
 */

export const CONTRACT_VERSION = 1;

/** JSON Schema (draft 2020-12) of an object */
export type JsonSchema = Record<string, unknown>;

export type ToolEffect = 'read' | 'write';

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
  validate(config: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<ValidationResult>;
  readonly tools: readonly ConnectorTool[];
  /**
   * true when the tools need no source (no external system, no credentials,
   * e.g. `memory`): they are visible in every run and get `sourceId: null`
   * and `config: {}`. Default false: a tool is visible once per source of
   * this kind the run may see.
   */
  readonly sourceless?: boolean;
}

/** What a plugin module may export instead of the plugin object (called once at load, no arguments). */
export type ConnectorPluginFactory = () => ConnectorPlugin | Promise<ConnectorPlugin>;
