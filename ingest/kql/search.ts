/**
 * search, and `*` as the left side of a string operator (`where * has "x"`):
 * a term is looked for in every column of the row, each read as Kusto's text
 * (`tostring`). A bare string term gets the operator Kusto's documentation
 * gives it by where its `*` stand: `x` has, `x*` hasprefix, `*x` hassuffix,
 * `*x*` contains, `a*b` matches regex (`*` as `.*`); `Column:"x"` is the same
 * on one column. `kind=case_sensitive` turns every string operator of the
 * predicate into its `_cs` form. The term is the parser's literal value, sent
 * as an escaped SQL string (and regex-escaped when it becomes a pattern).
 */
import { ServiceError } from '../../runtime/errors.js';
import { child, children, columnsOf, kindOf, type KNode } from './kusto.js';
import type { OperatorContext } from './operators.js';
import { scopeOf } from './operators.js';
import { from, ORD, type Column, type Relation } from './relation.js';
import { fromDynamic, scalar, toDynamic, typeOf, type ScalarScope } from './scalar.js';
import { stringOperator } from './string-operators.js';
import { ident, str } from './sql-text.js';

interface SearchScope {
  readonly scalar: ScalarScope;
  /** the columns a bare term is looked for in */
  readonly columns: readonly Column[];
  readonly caseSensitive: boolean;
}

/** A value as the text string operators see (what `scalar` does for a non-string operand). */
const asText = (sql: string, type: string): string => (type === 'string' ? sql : fromDynamic(toDynamic(sql, type), 'string'));

const escapeRegex = (text: string): string => text.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/** The `_cs` form of a string operator's syntax kind (`HasExpression` -> `HasCsExpression`), or the kind itself. */
const csKind = (kind: string, caseSensitive: boolean): string => (caseSensitive && !kind.includes('Cs') ? kind.replace(/Expression$/, 'CsExpression') : kind);

/** A bare term against one text value, by where its `*` stand. */
function termTest(term: string, hay: string, caseSensitive: boolean): string {
  if (!term.includes('*')) return stringOperator(csKind('HasExpression', caseSensitive), hay, str(term), term) as string;
  const leading = term.startsWith('*');
  const trailing = term.length > 1 && term.endsWith('*');
  const core = term.slice(leading ? 1 : 0, trailing ? -1 : undefined);
  if (core === '') return 'TRUE';
  if (!core.includes('*')) {
    const kind = leading && trailing ? 'ContainsExpression' : leading ? 'HasSuffixExpression' : 'HasPrefixExpression';
    return stringOperator(csKind(kind, caseSensitive), hay, str(core), core) as string;
  }
  const pattern = term.split('*').map(escapeRegex).join('.*');
  return `regexp_matches(coalesce(${hay}, ''), ${str(pattern)}${caseSensitive ? '' : ", 'i'"})`;
}

const anyOf = (tests: string[]): string => (tests.length ? `(${tests.join(' OR ')})` : 'FALSE');

const literalText = (node: KNode): string => child(node, 'Token')?.ValueText ?? '';

function columnText(name: string, scope: SearchScope): string {
  const column = scope.columns.find((candidate) => candidate.name === name);
  if (!column) throw new ServiceError('kql_error', `search: unknown column ${name}`, { name });
  return asText(ident(column.name), column.type);
}

/** One string operator node with both sides read as text, in the case the search asks for. */
function stringTest(node: KNode, scope: SearchScope): string | null {
  const kind = csKind(kindOf(node), scope.caseSensitive);
  if (stringOperator(kind, '', '') === null) return null;
  const side = (name: string): string => {
    const operand = child(node, name) as KNode;
    return asText(scalar(operand, scope.scalar), typeOf(operand));
  };
  return stringOperator(kind, side('Left'), side('Right'));
}

/** The search predicate: terms, `Column:term`, and/or/not over them; any other expression as a scalar. */
function predicate(node: KNode, scope: SearchScope): string {
  const kind = kindOf(node);
  switch (kind) {
    case 'StringLiteralExpression': {
      const term = literalText(node);
      return anyOf(scope.columns.map((column) => termTest(term, asText(ident(column.name), column.type), scope.caseSensitive)));
    }
    case 'SearchExpression': {
      const left = child(node, 'Left') as KNode;
      const right = child(node, 'Right') as KNode;
      const name = (left as unknown as { SimpleName?: string }).SimpleName;
      if (kindOf(left) !== 'NameReference' || !name || kindOf(right) !== 'StringLiteralExpression') throw unsupportedTerm(node);
      return termTest(literalText(right), columnText(name, scope), scope.caseSensitive);
    }
    case 'AndExpression':
    case 'OrExpression':
      return `(${predicate(child(node, 'Left') as KNode, scope)} ${kind === 'AndExpression' ? 'AND' : 'OR'} ${predicate(child(node, 'Right') as KNode, scope)})`;
    case 'ParenthesizedExpression':
      return `(${predicate(child(node, 'Expression') as KNode, scope)})`;
    case 'FunctionCallExpression': {
      const name = (child(node, 'Name') as unknown as { SimpleName?: string } | null)?.SimpleName;
      const args = children(child(node, 'ArgumentList') as KNode, 'Expressions');
      if (name === 'not' && args.length === 1) return `(NOT coalesce(${predicate(args[0] as KNode, scope)}, FALSE))`;
      return scalar(node, scope.scalar);
    }
    default:
      return stringTest(node, scope) ?? scalar(node, scope.scalar);
  }
}

const unsupportedTerm = (node: KNode): ServiceError =>
  new ServiceError('kql_error', 'search: Column:term needs a column name and a string literal', { text: node.ToString().trim().slice(0, 200) });

function caseSensitivity(node: KNode): boolean {
  let caseSensitive = false;
  for (const parameter of children(node, 'Parameters')) {
    const name = (child(child(parameter, 'Name') as KNode, 'SimpleName') as unknown as string | null) ?? '';
    const value = (child(parameter, 'Expression') as KNode).ToString().trim();
    if (name !== 'kind') throw new ServiceError('kql_error', `search: unsupported parameter ${name}`, { parameter: name });
    caseSensitive = value === 'case_sensitive';
  }
  return caseSensitive;
}

/** `$table`: the table's name when the input is one, else the name Kusto gives a piped input. */
function tableName(node: KNode): string {
  const pipe = (node as unknown as { Parent?: KNode | null }).Parent;
  const source = pipe && kindOf(pipe) === 'PipeExpression' ? child(pipe, 'Expression') : null;
  return source && kindOf(source) === 'NameReference' ? (source as unknown as { SimpleName: string }).SimpleName : 'search_arg0';
}

export function search(node: KNode, input: Relation, ctx: OperatorContext, output: Column[]): Relation {
  if (child(node, 'InClause') || child(node, 'DataScope'))
    throw new ServiceError('kql_error', 'search: in (...) and data scopes are not supported; pipe a table into search');
  const scope: SearchScope = { scalar: scopeOf(input, ctx), columns: input.columns, caseSensitive: caseSensitivity(node) };
  const condition = predicate(child(node, 'Condition') as KNode, scope);
  const known = new Set(input.columns.map((column) => column.name));
  const list = output.map((column) => (known.has(column.name) ? ident(column.name) : `${str(tableName(node))} AS ${ident(column.name)}`));
  if (input.ordered) list.push(ident(ORD));
  return ctx.chain.add(`SELECT ${list.join(', ')} FROM ${from(input)} WHERE coalesce(${condition}, FALSE)`, output, input.ordered);
}

/** The input row's columns of the operator holding `node`: the analyzer's type of the piped expression. */
function rowColumns(node: KNode, scope: ScalarScope): Column[] {
  let current: KNode | null | undefined = node;
  while (current && kindOf(current) !== 'PipeExpression') current = (current as unknown as { Parent?: KNode | null }).Parent;
  const typed = current ? columnsOf((child(current, 'Expression') as KNode).ResultType) : [];
  const types = new Map(typed.map((column) => [column.name, column.type]));
  return [...scope.columns].map((name) => ({ name, type: types.get(name) ?? 'dynamic' }));
}

/** `* <string operator> x`: true when any column matches; a negated operator when none does. */
export function starMatch(node: KNode, scope: ScalarScope): string {
  const kind = kindOf(node);
  const negated = kind.startsWith('Not');
  const positive = negated ? kind.slice(3) : kind;
  const rightNode = child(node, 'Right') as KNode;
  const right = asText(scalar(rightNode, scope), typeOf(rightNode));
  const tests = rowColumns(node, scope).map((column) => stringOperator(positive, asText(ident(column.name), column.type), right) as string);
  return negated ? `(NOT ${anyOf(tests)})` : anyOf(tests);
}
