import { ToolError, type ToolContext } from '../contract.js';

/** The run the call belongs to; artifacts exist only inside a run (not, e.g., for a client of `/mcp`). */
export function requireRunId(ctx: ToolContext): string {
  if (ctx.runId === undefined) throw new ToolError('no_run', 'artifacts belong to an agent run, and this call is not part of one');
  return ctx.runId;
}
