/**
 * JSON Schema (draft 2020-12) compilation for plugin config and tool input
 * schemas: one Ajv instance, schemas compiled once at load, failures turned
 * into `{ path, message }` issues that name every failing path.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { JsonSchema } from '../../connectors/contract.js';

// ajv-formats is CommonJS: under NodeNext its default export arrives as the module object
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

export interface SchemaIssue {
  /** dotted path of the failing value (`filters.0.state`); empty for the arguments object itself */
  readonly path: string;
  readonly message: string;
}

export type CompiledSchema = ValidateFunction;

function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    // fill declared defaults so tools get them; the caller validates a copy of the arguments
    useDefaults: true,
    // unknown keywords (typos like `requried`) fail at load, where the author sees them
    strictSchema: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    // tool schemas are not referenced across plugins: do not keep them by $id
    addUsedSchema: false,
  });
  addFormats(ajv);
  return ajv;
}

const ajv = createAjv();

/** Compiles a schema; throws an Error whose message says what does not compile. */
export function compileSchema(schema: JsonSchema): CompiledSchema {
  return ajv.compile(schema);
}

const pointerToPath = (pointer: string): string =>
  pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');

const join = (base: string, key: string): string => (base === '' ? key : `${base}.${key}`);

function issueOf(error: ErrorObject): SchemaIssue {
  const base = pointerToPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { path: join(base, String(params['missingProperty'])), message: 'is required' };
    case 'additionalProperties':
      return { path: join(base, String(params['additionalProperty'])), message: 'is not an accepted property' };
    case 'unevaluatedProperties':
      return { path: join(base, String(params['unevaluatedProperty'])), message: 'is not an accepted property' };
    case 'enum':
      return { path: base, message: `must be one of ${(params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
    default:
      return { path: base, message: error.message ?? `fails ${error.keyword}` };
  }
}

/** Every failing path once, in schema order (Ajv may report one path under several keywords). */
function issuesOf(errors: readonly ErrorObject[] | null | undefined): SchemaIssue[] {
  const seen = new Set<string>();
  const issues: SchemaIssue[] = [];
  for (const error of errors ?? []) {
    const issue = issueOf(error);
    const key = `${issue.path}\u0000${issue.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      issues.push(issue);
    }
  }
  return issues;
}

/**
 * Validates a deep copy of `value` (defaults are filled into the copy, never
 * into the caller's object).
 */
export function validateCopy(
  validator: CompiledSchema,
  value: unknown,
): { readonly ok: true; readonly value: Record<string, unknown> } | { readonly ok: false; readonly issues: SchemaIssue[] } {
  const copy: unknown = value === undefined ? undefined : structuredClone(value);
  if (validator(copy)) return { ok: true, value: copy as Record<string, unknown> };
  return { ok: false, issues: issuesOf(validator.errors) };
}
