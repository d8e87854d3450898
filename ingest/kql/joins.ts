/** join (every kind), lookup and union. Output columns come from the analyzer, mapped by position. */
import { ServiceError } from '../../runtime/errors.js';
import { child, children, kindOf, type KNode } from './kusto.js';
import { from, ORD, type Column, type Relation } from './relation.js';
import { coerce } from './sources.js';
import { ident, str } from './sql-text.js';
import type { OperatorContext } from './operators.js';

function parameter(node: KNode, name: string): string | null {
  for (const item of children(node, 'Parameters')) {
    const declared = child(child(item, 'Name') as KNode, 'SimpleName') as unknown as string;
    if (declared === name) return (child(item, 'Expression') as KNode).ToString().trim();
  }
  return null;
}

/** Join keys: `a` (same name both sides) or `$left.a == $right.b`. */
function keys(clause: KNode | null): { left: string; right: string }[] {
  if (!clause || kindOf(clause) !== 'JoinOnClause') throw new ServiceError('kql_error', 'join needs an on clause');
  return children(clause, 'Expressions').map((expression) => {
    if (kindOf(expression) === 'NameReference') {
      const name = (expression as unknown as { SimpleName: string }).SimpleName;
      return { left: name, right: name };
    }
    if (kindOf(expression) === 'EqualExpression') {
      const side = (node: KNode): { which: string; name: string } => {
        if (kindOf(node) !== 'PathExpression') throw new ServiceError('kql_error', 'join keys are $left.x == $right.y');
        const which = (child(node, 'Expression') as KNode).ToString().trim();
        const name = (child(node, 'Selector') as unknown as { SimpleName: string }).SimpleName;
        return { which, name };
      };
      const a = side(child(expression, 'Left') as KNode);
      const b = side(child(expression, 'Right') as KNode);
      return a.which === '$left' ? { left: a.name, right: b.name } : { left: b.name, right: a.name };
    }
    throw new ServiceError('kql_error', 'unsupported join condition', { text: expression.ToString().trim() });
  });
}

const JOIN_KINDS: Record<string, string> = {
  inner: 'INNER',
  innerunique: 'INNER',
  leftouter: 'LEFT',
  rightouter: 'RIGHT',
  fullouter: 'FULL',
  leftanti: 'ANTI',
  anti: 'ANTI',
  leftantisemi: 'ANTI',
  leftsemi: 'SEMI',
  rightanti: 'RIGHTANTI',
  rightantisemi: 'RIGHTANTI',
  rightsemi: 'RIGHTSEMI',
};

export function join(node: KNode, left: Relation, right: Relation, ctx: OperatorContext, output: Column[]): Relation {
  const kind = parameter(node, 'kind') ?? 'innerunique';
  const sqlKind = JOIN_KINDS[kind];
  if (!sqlKind) throw new ServiceError('kql_error', `unsupported join kind ${kind}`);
  const on = keys(child(node, 'ConditionClause'));
  let leftFrom = from(left);
  if (kind === 'innerunique') {
    const leftKeys = on.map((key) => ident(key.left)).join(', ');
    leftFrom = `(SELECT DISTINCT ON (${leftKeys}) * FROM ${from(left)}${left.ordered ? ` ORDER BY ${leftKeys}, ${ident(ORD)}` : ''})`;
  }
  const condition = on.map((key) => `l.${ident(key.left)} IS NOT DISTINCT FROM r.${ident(key.right)}`).join(' AND ');
  if (sqlKind === 'ANTI' || sqlKind === 'SEMI') {
    const list = left.columns.map((column) => `l.${ident(column.name)}`);
    return ctx.chain.add(
      `SELECT ${list.join(', ')} FROM ${leftFrom} l WHERE ${sqlKind === 'ANTI' ? 'NOT ' : ''}EXISTS (SELECT 1 FROM ${from(right)} r WHERE ${condition})`,
      left.columns,
      false,
    );
  }
  if (sqlKind === 'RIGHTANTI' || sqlKind === 'RIGHTSEMI') {
    const list = right.columns.map((column) => `r.${ident(column.name)}`);
    return ctx.chain.add(
      `SELECT ${list.join(', ')} FROM ${from(right)} r WHERE ${sqlKind === 'RIGHTANTI' ? 'NOT ' : ''}EXISTS (SELECT 1 FROM ${leftFrom} l WHERE ${condition})`,
      right.columns,
      false,
    );
  }
  const sources = [...left.columns.map((column) => `l.${ident(column.name)}`), ...right.columns.map((column) => `r.${ident(column.name)}`)];
  if (sources.length !== output.length) throw new ServiceError('kql_error', 'join: unexpected output columns');
  const list = output.map((column, index) => `${stringOrEmpty(sources[index] as string, column.type, sqlKind !== 'INNER')} AS ${ident(column.name)}`);
  return ctx.chain.add(`SELECT ${list.join(', ')} FROM ${leftFrom} l ${sqlKind} JOIN ${from(right)} r ON ${condition}`, output, false);
}

export function lookup(node: KNode, left: Relation, right: Relation, ctx: OperatorContext, output: Column[]): Relation {
  const kind = parameter(node, 'kind') ?? 'leftouter';
  const on = keys(child(node, 'LookupClause'));
  const rightKeys = new Set(on.map((key) => key.right));
  const sources = [
    ...left.columns.map((column) => `l.${ident(column.name)}`),
    ...right.columns.filter((column) => !rightKeys.has(column.name)).map((column) => `r.${ident(column.name)}`),
  ];
  if (sources.length !== output.length) throw new ServiceError('kql_error', 'lookup: unexpected output columns');
  const list = output.map((column, index) => `${stringOrEmpty(sources[index] as string, column.type, kind !== 'inner')} AS ${ident(column.name)}`);
  const equi = on.map((key) => `l.${ident(key.left)} IS NOT DISTINCT FROM r.${ident(key.right)}`).join(' AND ');
  return ctx.chain.add(`SELECT ${list.join(', ')} FROM ${from(left)} l ${kind === 'inner' ? 'INNER' : 'LEFT'} JOIN ${from(right)} r ON ${equi}`, output, false);
}

/** Kusto strings are never null: the missing side of an outer join reads ''. */
const stringOrEmpty = (sql: string, type: string, outer: boolean): string => (outer && type === 'string' ? `coalesce(${sql}, '')` : sql);

export function union(node: KNode, inputs: readonly Relation[], ctx: OperatorContext, output: Column[]): Relation {
  const source = parameter(node, 'withsource');
  const parts = inputs.map((input, index) => {
    const list = output.map((column) => {
      if (column.name === source && !input.columns.some((candidate) => candidate.name === source))
        return `${str(`union_arg${index}`)} AS ${ident(column.name)}`;
      const own = input.columns.find((candidate) => candidate.name === column.name);
      if (!own && column.type === 'string') return `'' AS ${ident(column.name)}`;
      const value = own ? coerce(ident(own.name), own.type, column.type) : `CAST(NULL AS ${column.type === 'dynamic' ? 'JSON' : 'VARCHAR'})`;
      return `${own ? value : coerce('NULL', 'string', column.type)} AS ${ident(column.name)}`;
    });
    return `SELECT ${list.join(', ')} FROM ${from(input)}`;
  });
  return ctx.chain.add(parts.join(' UNION ALL '), output, false);
}
