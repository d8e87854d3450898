/**
 * scan with one step, as Kusto's scan logic runs it ("Check 2" of the first
 * step on every record): the step's state starts at the declared defaults; a
 * record meeting the condition extends itself with the assignments (a bare
 * declared name is the record's own value, its default; `step.name` is the
 * state's), replaces the state with them, and is output. A recursive CTE walks
 * the serialized input one record per iteration, carrying the state.
 * Several steps (sequences promoted between steps) and `output=last|none` are
 * refused with `kql_error`.
 */
import { ServiceError } from '../../runtime/errors.js';
import { child, children, kindOf, type KNode } from './kusto.js';
import { scopeOf, type OperatorContext } from './operators.js';
import { from, ORD, type Column, type Relation } from './relation.js';
import { fromDynamic, scalar, typeOf } from './scalar.js';
import { duckType, ident, typedNull } from './sql-text.js';

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
  // the condition and assignments see the record (declared names at their defaults) and the state as `step.name`
  const scope = {
    ...scopeOf(input, ctx),
    columns: new Set([...input.columns.map((column) => column.name), ...declared.map((d) => d.name)]),
    steps: new Map([[stepName, new Map(declared.map((d) => [d.name, `__r.${d.state}`]))]]),
    ordered: false,
  };
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
  const order = input.ordered ? `ORDER BY ${ident(ORD)}` : '';
  const inputNames = input.columns.map((column) => ident(column.name));
  const records = `SELECT ${[...inputNames, ...declared.map((d) => `${d.initial} AS ${ident(d.name)}`)].join(', ')}, row_number() OVER (${order}) AS "__n" FROM ${from(input)}`;
  const seed = ['CAST(0 AS BIGINT) AS "__n"', 'FALSE AS "__hit"', 'CAST(-1 AS BIGINT) AS "__m"', ...declared.map((d) => `${d.initial} AS ${d.state}`)];
  const next = [
    '__b."__n"',
    `${condition} AS "__hit"`,
    `__r."__m" + CASE WHEN ${condition} THEN 1 ELSE 0 END`,
    ...declared.map((d) => `CASE WHEN ${condition} THEN ${assigned.get(d.name) ?? `__r.${d.state}`} ELSE __r.${d.state} END`),
  ];
  const values = new Map(declared.map((d) => [d.name, `__r.${d.state}`]));
  if (matchId) values.set(matchId, '__r."__m"');
  const list = columns.map((column) => `${values.get(column.name) ?? `__b.${ident(column.name)}`} AS ${ident(column.name)}`);
  const walk =
    `WITH RECURSIVE __b AS (${records}), __r AS (SELECT ${seed.join(', ')} UNION ALL ` +
    `SELECT ${next.join(', ')} FROM __r JOIN __b ON __b."__n" = __r."__n" + 1) ` +
    `SELECT ${list.join(', ')}, __b."__n" AS ${ident(ORD)} FROM __r JOIN __b ON __b."__n" = __r."__n" WHERE __r."__hit"`;
  return ctx.chain.add(`SELECT * FROM (${walk})`, columns, true);
}
