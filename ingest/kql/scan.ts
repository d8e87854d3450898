/**
 * scan with one step, as Kusto's scan logic runs it ("Check 2" of the first
 * step on every record): the step's state starts at the declared defaults; a
 * record meeting the condition extends itself with the assignments (a bare
 * declared name is the record's own value, its default; `step.name` is the
 * state's), replaces the state with them, and is output. The serialized
 * input is cut into chunks of CHUNK records; a recursive CTE folds one chunk
 * per iteration (list_reduce), carrying the last state to the next. Cost:
 * 10k records ~3.4 s, 100k ~55 s on a loaded 2-core machine (one record per
 * iteration took 27 s for 10k); the query timeout bounds it.
 * Several steps (sequences promoted between steps) and `output=last|none` are
 * refused with `kql_error`.
 */
import { ServiceError } from '../../runtime/errors.js';
import { child, children, kindOf, type KNode } from './kusto.js';
import { scopeOf, type OperatorContext } from './operators.js';
import { from, ORD, type Column, type Relation } from './relation.js';
import { fromDynamic, scalar, typeOf } from './scalar.js';
import { duckType, ident, str, typedNull } from './sql-text.js';

/** Records folded per iteration of the recursive CTE (the fold appends to a list: cost grows with its square). */
const CHUNK = 256;

interface Declared {
  readonly name: string;
  readonly type: string;
  /** the default as SQL of the declared type */
  readonly initial: string;
  /** the state column in the recursive CTE */
  readonly state: string;
}

const nameOf = (node: KNode): string => (node as unknown as { SimpleName?: string }).SimpleName ?? (child(node, 'SimpleName') as unknown as string);

function declarations(node: KNode, ctx: OperatorContext, input: Relation): Declared[] {
  const clause = child(node, 'DeclareClause');
  if (!clause) return [];
  return children(clause, 'Declarations').map((parameter, index) => {
    const nameAndType = child(parameter, 'NameAndType') as KNode;
    const name = nameOf(child(nameAndType, 'Name') as KNode);
    const type = (child(nameAndType, 'Name') as KNode).ResultType?.Name ?? 'dynamic';
    const defaultClause = child(parameter, 'DefaultValue');
    const value = defaultClause ? child(defaultClause, 'Value') : null;
    const initial = value ? typed(scalar(value, scopeOf(input, ctx)), typeOf(value), type) : typedNull(type);
    return { name, type, initial, state: ident(`__v${index}`) };
  });
}

/** An expression's SQL as the declared type (the recursive CTE's columns keep one type). */
function typed(sql: string, from: string, to: string): string {
  if (from === to) return `CAST(${sql} AS ${duckType(to)})`;
  if (from === 'dynamic') return fromDynamic(sql, to);
  return `CAST(${sql} AS ${duckType(to)})`;
}

function matchIdName(node: KNode): string | null {
  for (const parameter of children(node, 'Parameters')) {
    const keyword = (child(parameter, 'Name') as KNode).ToString().trim();
    if (keyword !== 'with_match_id') throw new ServiceError('kql_error', `scan: unsupported parameter ${keyword}`);
    const value = child(parameter, 'Expression') as KNode;
    return nameOf(kindOf(value) === 'NameDeclaration' ? value : (child(value, 'Name') as KNode));
  }
  return null;
}

export function scan(node: KNode, input: Relation, ctx: OperatorContext, output: Column[]): Relation {
  const steps = children(node, 'Steps');
  const step = steps[0];
  if (!step || steps.length > 1)
    throw new ServiceError('kql_error', 'scan: only a single step is supported', { construct: 'ScanOperator', steps: steps.length });
  const outputKind = child(step, 'ScanStepOutput');
  if (outputKind && (child(outputKind, 'OutputKind') as KNode).ToString().trim() !== 'all')
    throw new ServiceError('kql_error', 'scan: only output=all is supported');
  const declared = declarations(node, ctx, input);
  const matchId = matchIdName(node);
  const stepName = nameOf(child(step, 'Name') as KNode);
  // the analyzer always adds `match_id`; Kusto returns it only when with_match_id names it
  const known = new Set([...input.columns.map((column) => column.name), ...declared.map((d) => d.name), matchId]);
  const columns = output.filter((column) => known.has(column.name));
  // inside the fold the record is `__cur[1].row` and the state before it `__acc[-1].st` (see below)
  const field = (struct: string, name: string): string => `struct_extract(${struct}, ${str(name)})`;
  const recordNames = [...input.columns.map((column) => column.name), ...declared.map((d) => d.name)];
  const lets = new Map(ctx.lets);
  for (const name of recordNames) lets.set(name, field('__cur[1].row', name));
  const before = (d: Declared): string => field('__acc[-1].st', d.state);
  const scope = { columns: new Set<string>(), lets, steps: new Map([[stepName, new Map(declared.map((d) => [d.name, before(d)]))]]) };
  const condition = `coalesce(${scalar(child(step, 'Condition') as KNode, scope)}, FALSE)`;
  const assigned = new Map<string, string>();
  const computation = child(step, 'ComputationClause');
  for (const assignment of computation ? children(computation, 'Assignments') : []) {
    const name = nameOf(child(assignment, 'Name') as KNode);
    const target = declared.find((d) => d.name === name);
    if (!target) throw new ServiceError('kql_error', `scan: ${name} is not declared`);
    const expression = child(assignment, 'Expression') as KNode;
    assigned.set(name, typed(scalar(expression, scope), typeOf(expression), target.type));
  }
  const state = (fields: string[]): string => `{${fields.join(', ')}}`;
  const seed = state(["'__hit': FALSE", "'__m': CAST(-1 AS BIGINT)", ...declared.map((d) => `${str(d.state)}: ${d.initial}`)]);
  const next = state([
    `'__hit': ${condition}`,
    `'__m': ${field('__acc[-1].st', '__m')} + CASE WHEN ${condition} THEN 1 ELSE 0 END`,
    ...declared.map((d) => `${str(d.state)}: CASE WHEN ${condition} THEN ${assigned.get(d.name) ?? before(d)} ELSE ${before(d)} END`),
  ]);
  // A fold over each chunk of CHUNK records (list_reduce, each element a one-entry list of {row, st} so the
  // accumulator has the element's type); the recursive CTE runs once per chunk, carrying the last state.
  const fold = (rows: string, last: string): string =>
    `list_slice(list_reduce(list_transform(${rows}, __x -> [{'row': __x, 'st': ${last}}]), (__acc, __cur) -> list_append(__acc, {'row': __cur[1].row, 'st': ${next}}), [{'row': ${rows}[1], 'st': ${last}}]), 2, ${CHUNK} + 1)`;
  const order = input.ordered ? `ORDER BY ${ident(ORD)}` : '';
  const record = `{${[...input.columns.map((column) => `${str(column.name)}: ${ident(column.name)}`), ...declared.map((d) => `${str(d.name)}: ${d.initial}`), `'__n': "__n"`].join(', ')}}`;
  const numbered = `SELECT *, row_number() OVER (${order}) AS "__n" FROM ${from(input)}`;
  const chunks = `SELECT ("__n" - 1) // ${CHUNK} AS "__c", list(${record} ORDER BY "__n") AS "__rows" FROM (${numbered}) GROUP BY 1`;
  const values = new Map(declared.map((d) => [d.name, field('__e.st', d.state)]));
  if (matchId) values.set(matchId, field('__e.st', '__m'));
  const list = columns.map((column) => `${values.get(column.name) ?? field('__e.row', column.name)} AS ${ident(column.name)}`);
  const walk =
    `WITH RECURSIVE __k AS (${chunks}), __r AS (SELECT "__c", ${fold('"__rows"', seed)} AS "__out" FROM __k WHERE "__c" = 0 UNION ALL ` +
    `SELECT __k."__c", ${fold('__k."__rows"', '__r."__out"[-1].st')} FROM __r JOIN __k ON __k."__c" = __r."__c" + 1) ` +
    `SELECT ${list.join(', ')}, ${field('__e.row', '__n')} AS ${ident(ORD)} FROM (SELECT unnest("__out") AS __e FROM __r) WHERE __e.st."__hit"`;
  return ctx.chain.add(`SELECT * FROM (${walk})`, columns, true);
}
