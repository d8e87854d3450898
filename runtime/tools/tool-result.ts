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

/** Builds an error body; `details` is left out when absent so results stay minimal. */
export function toolErrorBody(code: string, message: string, details?: Record<string, unknown>): ToolErrorBody {
  return details === undefined ? { code, message } : { code, message, details };
}

export const failedOutcome = (body: ToolErrorBody): ToolOutcome => ({ error: body });
