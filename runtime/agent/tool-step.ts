/**
 * What a run does with a tool call the model made: the shared meta-tool
 * decision (runtime/tools/meta-tool-step.ts: search, unknown tool, bad
 * arguments, a policy denial before any approval); a resolved connector tool
 * goes to the machine to execute (after an approval when it writes).
 */
import type { ToolStepOutput } from '../../actors/agent-run.types.js';
import type { ToolCall } from '../llm/types.js';
import { metaToolStep } from '../tools/meta-tool-step.js';
import type { ToolCallGate } from '../tools/tool-gate.js';
import { subjectOf, type LiveRun } from './live-run.js';

export async function toolStep(run: LiveRun, call: ToolCall, policies: ToolCallGate | null): Promise<ToolStepOutput> {
  const step = await metaToolStep(run.catalog, call.name, call.arguments, {
    policies,
    orgId: run.request.orgId,
    runId: run.id,
    subject: subjectOf(run.request),
  });
  if (step.kind === 'result') return step;
  const { resolved } = step;
  return { kind: 'execute', tool: resolved.tool.name, args: resolved.args, effect: resolved.effect, resolved };
}
