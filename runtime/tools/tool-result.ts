/**
 * What a tool call gives back to the model: `{ result }` or `{ error }` with a
 * readable `code`. Tool failures are results, never exceptions: a failing tool
 * must not crash the run.
 */

export interface ToolErrorBody {
  /** snake_case, e.g. `unknown_tool`, `invalid_arguments`, `tool_failed`, `cancelled`, or a plugin's own code */
  readonly code: string;
  readonly message: string;
  readonly details?: Record<string, unknown>;
}

export type ToolOutcome = { readonly result: unknown } | { readonly error: ToolErrorBody };

/**
 * Codes the catalog itself produces (plugins add their own through ToolError):
 * - `unknown_tool`: no visible tool has that name (details.suggestions: close names)
 * - `unknown_source`: a `source_id` that no visible entry of that tool has (details.choices)
 * - `ambiguous_tool`: several sources offer the tool and no `source_id` was given (details.choices)
 * - `invalid_arguments`: the arguments fail the tool's input schema (details.issues: every failing path)
 * - `source_misconfigured`: the source's stored config fails the plugin's config schema (details.issues)
 * - `tool_failed`: the tool threw something other than a ToolError, or returned a value that is not JSON
 * - `cancelled`: the run's signal was aborted before or while the tool ran
 */
export type CatalogErrorCode =
  | 'unknown_tool'
  | 'unknown_source'
  | 'ambiguous_tool'
  | 'invalid_arguments'
  | 'source_misconfigured'
  | 'tool_failed'
  | 'cancelled';

/** Builds an error body; `details` is left out when absent so results stay minimal. */
export function toolErrorBody(code: string, message: string, details?: Record<string, unknown>): ToolErrorBody {
  return details === undefined ? { code, message } : { code, message, details };
}

export const failedOutcome = (body: ToolErrorBody): ToolOutcome => ({ error: body });

export const isErrorOutcome = (outcome: ToolOutcome): outcome is { readonly error: ToolErrorBody } => 'error' in outcome;
