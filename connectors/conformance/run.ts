/**
 * The conformance checks as one run with a report, no test framework: what
 * the `conformance` command prints. The same checks as the vitest kit
 * (index.ts), from checks.ts.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ConnectorPlugin } from '../contract.js';
import type { ToolOutcome } from '../../runtime/tools/tool-result.js';
import { abortProblems, sampleCallProblems, staticProblems, validateProblems, type SampleContext } from './checks.js';
import type { ConformanceRunOptions } from './cli-config.js';

export interface ConformanceToolCall {
  /** the tool's own name (`say`) or its full name (`echo.say`) */
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /** `{ result }` (deep equal) or `{ error_code }`; default: any JSON result or ToolError */
  readonly expect?: { readonly result: unknown } | { readonly error_code: string };
}

export interface CheckReport {
  readonly check: string;
  /** empty when it passed */
  readonly problems: readonly string[];
  readonly skipped?: boolean;
}

function expectationProblems(call: ConformanceToolCall, outcome: ToolOutcome): string[] {
  if (!call.expect) return [];
  if ('error_code' in call.expect) {
    const got = 'error' in outcome ? outcome.error.code : 'a result';
    return got === call.expect.error_code ? [] : [`expected error ${call.expect.error_code}, got ${got}: ${JSON.stringify(outcome)}`];
  }
  return isDeepStrictEqual(outcome, { result: call.expect.result })
    ? []
    : [`expected ${JSON.stringify({ result: call.expect.result })}, got ${JSON.stringify(outcome)}`];
}

/** Runs every check against the plugin; never throws for a plugin's fault (it is a problem in the report). */
export async function runConformance(plugin: ConnectorPlugin, options: ConformanceRunOptions): Promise<CheckReport[]> {
  const reports: CheckReport[] = [];
  const { loaded, problems } = staticProblems(plugin);
  reports.push({ check: 'static contract (kind, version, contract range, tool names, effects, descriptions, schemas)', problems });
  if (!loaded) return reports;

  reports.push({ check: 'validate() accepts validConfig', problems: await validateProblems(plugin, options.validConfig, true) });
  if (options.invalidConfig === undefined) {
    reports.push({ check: 'validate() refuses invalidConfig with details', problems: [], skipped: true });
  } else {
    reports.push({ check: 'validate() refuses invalidConfig with details', problems: await validateProblems(plugin, options.invalidConfig, false) });
  }

  const toolOf = (name: string) => loaded.tools.find((tool) => tool.tool.name === name || tool.name === name);
  const sampled = new Set(options.toolCalls.map((call) => toolOf(call.tool)?.name));
  const missing = loaded.tools.filter((tool) => !sampled.has(tool.name)).map((tool) => tool.name);
  reports.push({ check: 'a sample call for every tool', problems: missing.length === 0 ? [] : [`tools without a sample call: ${missing.join(', ')}`] });

  const sample: SampleContext = {
    orgId: options.orgId ?? 'org_conformance',
    sourceId: options.sourceId !== undefined ? options.sourceId : plugin.sourceless ? null : 'src_conformance',
    config: options.validConfig,
  };
  for (const [index, call] of options.toolCalls.entries()) {
    const tool = toolOf(call.tool);
    const label = `sample call ${index + 1} (${call.tool})`;
    if (!tool) {
      reports.push({ check: label, problems: [`no tool "${call.tool}" (tools: ${loaded.tools.map((t) => t.tool.name).join(', ')})`] });
      continue;
    }
    const { outcome, problems: callProblems } = await sampleCallProblems(tool, call.args, sample);
    reports.push({
      check: `${label} returns a JSON result or a ToolError`,
      problems: outcome ? [...callProblems, ...expectationProblems(call, outcome)] : callProblems,
    });
    reports.push({ check: `${label} honours an aborted signal`, problems: await abortProblems(tool, call.args, sample) });
  }
  return reports;
}
