/**
 * The checks every tool passes before it is usable, whether a plugin lists it
 * (the loader) or a source's `listTools` returns it (domains/sources): name,
 * description, effect, `run`, an input schema that compiles.
 */
import type { ConnectorTool } from '../../connectors/contract.js';
import { compileSchema, type CompiledSchema } from './json-schema.js';
import type { LoadedTool } from './registry.js';

export const NAME_PATTERN = /^[a-z][a-z0-9_]*$/;

export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export const nonEmptyString = (value: unknown): value is string => typeof value === 'string' && value.trim().length > 0;

export const compileProblem = (what: string, schema: unknown): { validator?: CompiledSchema; problem?: string } => {
  if (!isRecord(schema)) return { problem: `${what} is not a JSON Schema object` };
  try {
    return { validator: compileSchema(schema) };
  } catch (error) {
    return { problem: `${what} does not compile: ${(error as Error).message}` };
  }
};

/** Checks one tool (static or dynamic) against the contract and compiles its input schema; problems are pushed, not thrown. */
export function checkTool(kind: string, candidate: unknown, index: number, problems: string[]): LoadedTool | undefined {
  if (!isRecord(candidate)) {
    problems.push(`tools[${index}] is not an object`);
    return undefined;
  }
  const rawName = candidate['name'];
  const label = typeof rawName === 'string' ? `tool "${rawName}"` : `tools[${index}]`;
  const before = problems.length;
  if (typeof rawName !== 'string' || !NAME_PATTERN.test(rawName)) {
    problems.push(`${label}: name must match ${NAME_PATTERN.source}`);
  }
  if (!nonEmptyString(candidate['description'])) problems.push(`${label}: description must be a non-empty string`);
  if (candidate['effect'] !== 'read' && candidate['effect'] !== 'write') problems.push(`${label}: effect must be "read" or "write"`);
  if (typeof candidate['run'] !== 'function') problems.push(`${label}: run must be a function`);
  const schema = candidate['input_schema'];
  let validator: CompiledSchema | undefined;
  if (isRecord(schema) && schema['type'] !== 'object') {
    problems.push(`${label}: input_schema must describe an object ("type": "object")`);
  } else {
    const compiled = compileProblem(`${label}: input_schema`, schema);
    if (compiled.problem) problems.push(compiled.problem);
    validator = compiled.validator;
  }
  if (problems.length > before || !validator) return undefined;
  const tool = candidate as unknown as ConnectorTool;
  return { name: `${kind}.${tool.name}`, connector: kind, tool, validateArgs: validator };
}

/**
 * Checks the tools a plugin's `listTools` returned for one source, exactly
 * like static tools, named `<prefix>.<tool>`. A bad tool is left out and
 * named in `problems`; the good ones are usable.
 */
export function checkDynamicTools(prefix: string, connector: string, candidates: readonly unknown[]): { tools: LoadedTool[]; problems: string[] } {
  const tools: LoadedTool[] = [];
  const problems: string[] = [];
  const names = new Set<string>();
  candidates.forEach((candidate, index) => {
    const found: string[] = [];
    const tool = checkTool(prefix, candidate, index, found);
    if (!tool) return void problems.push(...found);
    if (names.has(tool.name)) return void problems.push(`duplicate tool name ${tool.name}`);
    names.add(tool.name);
    tools.push({ ...tool, connector });
  });
  return { tools, problems };
}
