/**
 * What a run does with a tool call the model made: a catalog search answers
 * at once (without the tools the organization's policies deny), an unknown
 * tool or bad arguments become an error the model can read, a policy may
 * deny the call before any approval; otherwise the resolved connector tool
 * goes to the machine to execute (after an approval when it writes).
 */
import type { ToolStepOutput } from '../../actors/agent-run.types.js';
import {
  applySearchConnectorTools,
  EXECUTE_CONNECTOR_TOOL,
  resolveExecuteConnectorTool,
  SEARCH_CONNECTOR_TOOLS,
  type SearchConnectorToolsResult,
} from '../tools/meta-tools.js';
import { failedOutcome, toolErrorBody, type ToolOutcome } from '../tools/tool-result.js';
import type { ToolCall } from '../llm/types.js';
import type { ToolCallGate } from '../tools/tool-gate.js';
import { subjectOf, type LiveRun } from './live-run.js';

export async function toolStep(run: LiveRun, call: ToolCall, policies: ToolCallGate | null): Promise<ToolStepOutput> {
  if (call.name === SEARCH_CONNECTOR_TOOLS) {
    return { kind: 'result', outcome: await withoutDeniedTools(run, applySearchConnectorTools(run.catalog, call.arguments), policies) };
  }
  if (call.name !== EXECUTE_CONNECTOR_TOOL) {
    return {
      kind: 'result',
      outcome: failedOutcome(
        toolErrorBody('unknown_tool', `no tool named "${call.name}": call ${SEARCH_CONNECTOR_TOOLS} or ${EXECUTE_CONNECTOR_TOOL}`, {
          suggestions: [SEARCH_CONNECTOR_TOOLS, EXECUTE_CONNECTOR_TOOL],
        }),
      ),
    };
  }
  const resolution = resolveExecuteConnectorTool(run.catalog, call.arguments);
  if (!resolution.ok) return { kind: 'result', outcome: failedOutcome(resolution.error) };
  if (policies) {
    // before the approval gate: a denied write never asks anybody
    const denied = await policies.precheck(
      {
        name: resolution.tool.name,
        connector: resolution.tool.connector,
        effect: resolution.effect,
        args: resolution.args,
        orgId: run.request.orgId,
        runId: run.id,
      },
      subjectOf(run.request),
    );
    if (denied) return { kind: 'result', outcome: denied };
  }
  return {
    kind: 'execute',
    tool: resolution.tool.name,
    args: resolution.args,
    effect: resolution.effect,
    resolved: resolution,
  };
}

/** search results without the tools the organization's policies deny whatever the arguments */
async function withoutDeniedTools(run: LiveRun, outcome: ToolOutcome, policies: ToolCallGate | null): Promise<ToolOutcome> {
  if (!policies || !('result' in outcome)) return outcome;
  const found = outcome.result as SearchConnectorToolsResult;
  const hidden = await Promise.all(found.tools.map((tool) => policies.hides(run.request.orgId, tool, subjectOf(run.request))));
  return { result: { ...found, tools: found.tools.filter((_tool, index) => !hidden[index]) } };
}
