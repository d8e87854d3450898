/**
 * Task input templates: Handlebars in an isolated environment, restricted to
 * the helpers `if`, `each`, `lookup` and `raw`, with no HTML escaping
 * (prompts are not HTML). A template is checked when the task is saved, by
 * walking its syntax tree: unknown helpers, partials and decorators are
 * refused then, not at the first fire.
 *
 * Context: `trigger.body`, `trigger.headers`, `trigger.delivery_id`,
 * `trigger.origin`. `{{trigger.body}}` (an object) renders as its JSON.
 * Paths take the spec's indexed form `commits[0].id` (template-parser.ts)
 * as well as Handlebars' `commits.[0].id`.
 */
import Handlebars from 'handlebars';
import type { TriggerInput } from './firing.js';
import { indexedPathParser } from './template-parser.js';

const handlebars = Handlebars.create();
/** raw (unprocessed) AST of a source; `precompile` and `compile` take it in place of the text */
const parseIndexed = indexedPathParser(handlebars);
/** Handlebars' `parse` also takes a raw AST (it then only applies whitespace control); its typings say string */
const processed = handlebars.parse as unknown as (input: hbs.AST.Program) => hbs.AST.Program;
// `{{{{raw}}}} ... {{{{/raw}}}}` keeps its content verbatim (a prompt may show template syntax)
handlebars.registerHelper('raw', function (this: unknown, options: Handlebars.HelperOptions) {
  return options.fn(this);
});

const ALLOWED_HELPERS = new Set(['if', 'each', 'lookup', 'raw']);
/** Handlebars' built-ins outside the subset: refused even without arguments */
const BUILTIN_NAMES = new Set(['if', 'each', 'raw', 'log', 'with', 'unless', 'helperMissing', 'blockHelperMissing']);
const BLOCK_HELPERS = new Set(['if', 'each', 'raw']);
const COMPILE_OPTIONS = {
  noEscape: true,
  strict: false,
  knownHelpersOnly: true,
  knownHelpers: { if: true, each: true, lookup: true, raw: true, unless: false, with: false, log: false, helperMissing: false, blockHelperMissing: false },
} satisfies CompileOptions;

type CompileOptions = Parameters<typeof handlebars.compile>[1];

export class TemplateError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(`input_template.${key}: ${message}`);
    this.name = 'TemplateError';
  }
}

type Node = hbs.AST.Node;

const oneLine = (error: unknown): string => (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ').trim();

function helperName(node: hbs.AST.MustacheStatement | hbs.AST.BlockStatement | hbs.AST.SubExpression): string | null {
  const path = node.path;
  return path.type === 'PathExpression' ? (path as hbs.AST.PathExpression).original : null;
}

/** Throws TemplateError naming the first construct outside the subset. */
function walk(key: string, node: Node | null | undefined): void {
  if (!node) return;
  switch (node.type) {
    case 'Program':
      for (const child of (node as hbs.AST.Program).body) walk(key, child);
      return;
    case 'PartialStatement':
    case 'PartialBlockStatement':
      throw new TemplateError(key, 'partials are not allowed');
    case 'Decorator':
    case 'DecoratorBlock':
      throw new TemplateError(key, 'decorators are not allowed');
    case 'BlockStatement': {
      const block = node as hbs.AST.BlockStatement;
      const name = helperName(block);
      if (name === null || !BLOCK_HELPERS.has(name)) throw new TemplateError(key, `unknown block helper "${name ?? '?'}" (allowed: if, each, raw)`);
      for (const param of block.params) walk(key, param);
      walk(key, block.program);
      walk(key, block.inverse);
      return;
    }
    case 'MustacheStatement':
    case 'SubExpression': {
      const call = node as hbs.AST.MustacheStatement | hbs.AST.SubExpression;
      const hasArguments = call.params.length > 0 || (call.hash?.pairs.length ?? 0) > 0;
      if (hasArguments || node.type === 'SubExpression') {
        const name = helperName(call);
        if (name === null || !ALLOWED_HELPERS.has(name) || BLOCK_HELPERS.has(name)) {
          throw new TemplateError(key, `unknown helper "${name ?? '?'}" (allowed: lookup; blocks if, each, raw)`);
        }
      } else if (call.path.type === 'PathExpression' && BUILTIN_NAMES.has((call.path as hbs.AST.PathExpression).original)) {
        throw new TemplateError(key, `"${(call.path as hbs.AST.PathExpression).original}" is not a value (helpers: lookup; blocks if, each, raw)`);
      }
      for (const param of call.params) walk(key, param);
      for (const pair of call.hash?.pairs ?? []) walk(key, pair.value);
      return;
    }
    default:
      return;
  }
}

/** Parses and checks one template string; throws TemplateError. */
function check(key: string, source: string): void {
  let ast: hbs.AST.Program;
  try {
    ast = processed(parseIndexed(source));
  } catch (error) {
    throw new TemplateError(key, oneLine(error));
  }
  walk(key, ast);
  try {
    handlebars.precompile(parseIndexed(source), COMPILE_OPTIONS);
  } catch (error) {
    throw new TemplateError(key, oneLine(error));
  }
}

/** Validates every string value of an input template (nested keys included); throws TemplateError. */
export function validateInputTemplate(template: Record<string, unknown>, prefix = ''): void {
  for (const [key, value] of Object.entries(template)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (typeof value === 'string') check(path, value);
    else if (value !== null && typeof value === 'object' && !Array.isArray(value)) validateInputTemplate(value as Record<string, unknown>, path);
  }
}

/** An object renders as JSON when interpolated whole (`{{trigger.body}}`); its fields stay addressable. */
function renderable(value: unknown): unknown {
  if (Array.isArray(value)) {
    const copy = value.map(renderable);
    Object.defineProperty(copy, 'toString', { value: () => JSON.stringify(value), enumerable: false });
    return copy;
  }
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) copy[key] = renderable(field);
    Object.defineProperty(copy, 'toString', { value: () => JSON.stringify(value), enumerable: false });
    return copy;
  }
  return value;
}

const compiled = new Map<string, Handlebars.TemplateDelegate>();
const COMPILED_CACHE_LIMIT = 1000;

function render(source: string, context: unknown): string {
  let template = compiled.get(source);
  if (!template) {
    if (compiled.size >= COMPILED_CACHE_LIMIT) compiled.clear();
    template = handlebars.compile(parseIndexed(source), COMPILE_OPTIONS);
    compiled.set(source, template);
  }
  // prototype access stays off (Handlebars' default): a body cannot reach constructors
  return template(context);
}

function renderValue(value: unknown, context: unknown): unknown {
  if (typeof value === 'string') return render(value, context);
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, renderValue(field, context)]));
  }
  return value;
}

/** Renders every string of the template against the trigger; other values pass through. */
export function renderInputTemplate(template: Record<string, unknown>, trigger: TriggerInput): Record<string, unknown> {
  const context = {
    trigger: renderable({ origin: trigger.origin, body: trigger.body, headers: trigger.headers, delivery_id: trigger.delivery_id }),
  };
  return renderValue(template, context) as Record<string, unknown>;
}

/** Renders one template string against any context (objects render as JSON when interpolated whole): the orchestrator's instructions. */
export function renderWithContext(source: string, context: Record<string, unknown>): string {
  return render(source, renderable(context));
}
