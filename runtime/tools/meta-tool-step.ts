/**
 * The one decision of a meta-tool call before anything runs, shared by agent
 * runs (runtime/agent/tool-step.ts) and voice sessions (domains/voice): a
 * catalog search answers at once (without the tools the organization's
 * policies deny whatever the arguments), an unknown tool or bad arguments
 * become an error the model can read, a policy may deny the call before any
 * approval (decision logged, a denial audited by the gate); otherwise the
 * resolved connector tool is returned for the caller to approve and run.
 */
import type { ResolvedToolCall, ToolCatalog } from './catalog.js';
import {
  applySearchConnectorTools,
  EXECUTE_CONNECTOR_TOOL,
  resolveExecuteConnectorTool,
  SEARCH_CONNECTOR_TOOLS,
  type SearchConnectorToolsResult,
} from './meta-tools.js';
import type { PolicySubject, ToolCallGate } from './tool-gate.js';
import { failedOutcome, toolErrorBody, type ToolOutcome } from './tool-result.js';

/** who a call is decided for: the policy gate (null: feature off), the organization, the run if any */
export interface MetaToolScope {
  readonly policies: ToolCallGate | null;
  readonly orgId: string;
  readonly runId?: string;
  readonly subject: PolicySubject;
}

export type MetaToolStep = { readonly kind: 'result'; readonly outcome: ToolOutcome } | { readonly kind: 'execute'; readonly resolved: ResolvedToolCall };

export async function metaToolStep(catalog: ToolCatalog, name: string, args: unknown, scope: MetaToolScope): Promise<MetaToolStep> {
  if (name === SEARCH_CONNECTOR_TOOLS) return { kind: 'result', outcome: await withoutDeniedTools(applySearchConnectorTools(catalog, args), scope) };
  if (name !== EXECUTE_CONNECTOR_TOOL) {
    return {
      kind: 'result',
      outcome: failedOutcome(
        toolErrorBody('unknown_tool', `no tool named "${name}": call ${SEARCH_CONNECTOR_TOOLS} or ${EXECUTE_CONNECTOR_TOOL}`, {
          suggestions: [SEARCH_CONNECTOR_TOOLS, EXECUTE_CONNECTOR_TOOL],
        }),
      ),
    };
  }
  const resolution = resolveExecuteConnectorTool(catalog, args);
  if (!resolution.ok) return { kind: 'result', outcome: failedOutcome(resolution.error) };
  const { policies } = scope;
  if (policies) {
    // before the approval gate: a denied write never asks anybody
    const denied = await policies.precheck(
      {
        name: resolution.tool.name,
        connector: resolution.tool.connector,
        effect: resolution.effect,
        args: resolution.args,
        orgId: scope.orgId,
        ...(scope.runId === undefined ? {} : { runId: scope.runId }),
      },
      scope.subject,
    );
    if (denied) return { kind: 'result', outcome: denied };
  }
  return { kind: 'execute', resolved: resolution };
}

/** search results without the tools the organization's policies deny whatever the arguments */
async function withoutDeniedTools(outcome: ToolOutcome, scope: MetaToolScope): Promise<ToolOutcome> {
  const { policies } = scope;
  if (!policies || !('result' in outcome)) return outcome;
  const found = outcome.result as SearchConnectorToolsResult;
  const hidden = await Promise.all(found.tools.map((tool) => policies.hides(scope.orgId, tool, scope.subject)));
  return { result: { ...found, tools: found.tools.filter((_tool, index) => !hidden[index]) } };
}
