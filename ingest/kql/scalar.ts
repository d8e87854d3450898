/**
 * Scalar expressions of the Kusto syntax tree as DuckDB SQL. Names resolve only
 * to the columns of the input and to scalar `let`s (through the symbols the
 * analyzer bound); functions only to the table in functions.ts. Anything else
 * is refused with `kql_error`, never passed through as text.
 */
import { ServiceError } from '../../runtime/errors.js';
import { callFunction } from './functions.js';
import { child, children, kindOf, type KNode } from './kusto.js';
import { datetimeText, duckType, ident, str, timespanTicks, typedNull } from './sql-text.js';

export interface ScalarScope {
  /** columns of the input row, by Kusto name */
  readonly columns: ReadonlySet<string>;
  /** scalar lets, by name, as SQL */
  readonly lets: ReadonlyMap<string, string>;
}

export const typeOf = (node: KNode): string => node.ResultType?.Name ?? 'dynamic';

export function unsupported(node: KNode, what = kindOf(node)): ServiceError {
  return new ServiceError('kql_error', `unsupported in KQL translation: ${what}`, { construct: what, text: node.ToString().trim().slice(0, 200) });
}

/** A dynamic (JSON) value read as a Kusto scalar type. */
export function fromDynamic(sql: string, type: string): string {
  switch (type) {
    case 'dynamic':
      return sql;
    case 'string':
    case 'guid':
      return `(CASE WHEN json_type(${sql}) = 'VARCHAR' THEN (${sql}) ->> '$' ELSE CAST(${sql} AS VARCHAR) END)`;
    case 'datetime':
      return `TRY_CAST((${sql}) ->> '$' AS TIMESTAMP)`;
    default:
      return `TRY_CAST((${sql}) ->> '$' AS ${duckType(type)})`;
  }
}

/** Any value as JSON (for dynamic contexts). */
export function toDynamic(sql: string, type: string): string {
  if (type === 'dynamic') return sql;
  if (type === 'datetime') return `to_json(strftime(${sql}, '%Y-%m-%dT%H:%M:%S.%fZ'))`;
  return `to_json(${sql})`;
}

function literal(node: KNode): string {
  const type = typeOf(node);
  const token = child(node, 'Token');
  const text = token?.ValueText ?? token?.Text ?? '';
  if (kindOf(node) === 'NullLiteralExpression' || text === 'null') return typedNull(type === 'unknown' ? 'dynamic' : type);
  switch (kindOf(node)) {
    case 'StringLiteralExpression':
      return str(text);
    case 'BooleanLiteralExpression':
      return text.toLowerCase() === 'true' ? 'TRUE' : 'FALSE';
    case 'IntLiteralExpression':
    case 'LongLiteralExpression':
      if (!/^-?(0x[0-9a-f]+|[0-9]+)$/i.test(text.trim())) throw unsupported(node, `literal ${text}`);
      return `CAST(${BigInt(text.trim()).toString()} AS ${duckType(type)})`;
    case 'RealLiteralExpression':
    case 'DecimalLiteralExpression': {
      const value = Number(text.trim());
      if (Number.isNaN(value)) return `CAST('nan' AS DOUBLE)`;
      if (!Number.isFinite(value)) return `CAST('${value > 0 ? 'inf' : '-inf'}' AS DOUBLE)`;
      return `CAST(${String(value)} AS DOUBLE)`;
    }
    case 'DateTimeLiteralExpression':
      return `CAST(${str(datetimeText(text))} AS TIMESTAMP)`;
    case 'TimespanLiteralExpression': {
      const ticks = timespanTicks(text);
      return ticks === null ? 'CAST(NULL AS BIGINT)' : `CAST(${ticks.toString()} AS BIGINT)`;
    }
    case 'GuidLiteralExpression':
      return str(text.toLowerCase());
    default:
      throw unsupported(node);
  }
}

function dynamicLiteral(node: KNode): string {
  const value = (node as unknown as { LiteralValue?: unknown }).LiteralValue;
  if (value === null || value === undefined) return 'CAST(NULL AS JSON)';
  return `CAST(${str(typeof value === 'string' ? value : JSON.stringify(value))} AS JSON)`;
}

const CASE_INSENSITIVE: Record<string, { op: string; ci: boolean; not: boolean }> = {
  ContainsExpression: { op: 'contains', ci: true, not: false },
  NotContainsExpression: { op: 'contains', ci: true, not: true },
  ContainsCsExpression: { op: 'contains', ci: false, not: false },
  NotContainsCsExpression: { op: 'contains', ci: false, not: true },
  StartsWithExpression: { op: 'starts_with', ci: true, not: false },
  NotStartsWithExpression: { op: 'starts_with', ci: true, not: true },
  StartsWithCsExpression: { op: 'starts_with', ci: false, not: false },
  NotStartsWithCsExpression: { op: 'starts_with', ci: false, not: true },
  EndsWithExpression: { op: 'ends_with', ci: true, not: false },
  NotEndsWithExpression: { op: 'ends_with', ci: true, not: true },
  EndsWithCsExpression: { op: 'ends_with', ci: false, not: false },
  NotEndsWithCsExpression: { op: 'ends_with', ci: false, not: true },
  HasExpression: { op: 'has', ci: true, not: false },
  NotHasExpression: { op: 'has', ci: true, not: true },
  HasCsExpression: { op: 'has', ci: false, not: false },
  NotHasCsExpression: { op: 'has', ci: false, not: true },
  HasPrefixExpression: { op: 'hasprefix', ci: true, not: false },
  NotHasPrefixExpression: { op: 'hasprefix', ci: true, not: true },
  HasPrefixCsExpression: { op: 'hasprefix', ci: false, not: false },
  NotHasPrefixCsExpression: { op: 'hasprefix', ci: false, not: true },
  HasSuffixExpression: { op: 'hassuffix', ci: true, not: false },
  NotHasSuffixExpression: { op: 'hassuffix', ci: true, not: true },
  HasSuffixCsExpression: { op: 'hassuffix', ci: false, not: false },
  NotHasSuffixCsExpression: { op: 'hassuffix', ci: false, not: true },
};

/** Regex-escapes a SQL string value inside DuckDB (the needle may be any expression). */
const reEscape = (sql: string): string => `regexp_replace(${sql}, '([\\\\^$.|?*+()\\[\\]{}-])', '\\\\\\1', 'g')`;

/** Kusto term matching: the needle must start (has, hasprefix) and/or end (has, hassuffix) at a term boundary. */
function termMatch(op: string, hay: string, needle: string, ci: boolean): string {
  const before = "'(^|[^[:alnum:]])'";
  const after = "'([^[:alnum:]]|$)'";
  const pattern =
    op === 'has' ? `${before} || ${reEscape(needle)} || ${after}` : op === 'hasprefix' ? `${before} || ${reEscape(needle)}` : `${reEscape(needle)} || ${after}`;
  return `(${needle} = '' OR regexp_matches(${hay}, ${pattern}${ci ? ", 'i'" : ''}))`;
}

function stringOperator(kind: string, left: string, right: string): string | null {
  const spec = CASE_INSENSITIVE[kind];
  if (!spec) return null;
  const hay = `coalesce(${left}, '')`;
  const needle = `coalesce(${right}, '')`;
  let test: string;
  if (spec.op === 'has' || spec.op === 'hasprefix' || spec.op === 'hassuffix') test = termMatch(spec.op, hay, needle, spec.ci);
  else test = spec.ci ? `${spec.op}(lower(${hay}), lower(${needle}))` : `${spec.op}(${hay}, ${needle})`;
  return spec.not ? `(NOT ${test})` : test;
}

const ARITHMETIC: Record<string, string> = {
  AddExpression: '+',
  SubtractExpression: '-',
  MultiplyExpression: '*',
  DivideExpression: '/',
  ModuloExpression: '%',
};

const COMPARISON: Record<string, string> = {
  LessThanExpression: '<',
  LessThanOrEqualExpression: '<=',
  GreaterThanExpression: '>',
  GreaterThanOrEqualExpression: '>=',
  EqualExpression: '=',
  NotEqualExpression: '<>',
};

const isInteger = (type: string): boolean => type === 'long' || type === 'int';

function arithmetic(node: KNode, scope: ScalarScope): string {
  const kind = kindOf(node);
  const leftNode = child(node, 'Left') as KNode;
  const rightNode = child(node, 'Right') as KNode;
  const lt = typeOf(leftNode);
  const rt = typeOf(rightNode);
  let left = scalar(leftNode, scope);
  let right = scalar(rightNode, scope);
  if (lt === 'dynamic') left = fromDynamic(left, rt === 'dynamic' ? 'real' : rt);
  if (rt === 'dynamic') right = fromDynamic(right, lt === 'dynamic' ? 'real' : lt);
  const op = ARITHMETIC[kind] as string;
  if (lt === 'datetime' && rt === 'datetime' && op === '-') return `((epoch_us(${left}) - epoch_us(${right})) * 10)`;
  if (lt === 'datetime' && rt === 'timespan') return `(${left} ${op} to_microseconds(CAST(${right} // 10 AS BIGINT)))`;
  if (lt === 'timespan' && rt === 'datetime' && op === '+') return `(${right} + to_microseconds(CAST(${left} // 10 AS BIGINT)))`;
  if (op === '/') {
    if (lt === 'timespan' && rt === 'timespan') return `(CAST(${left} AS DOUBLE) / ${right})`;
    if ((isInteger(lt) || lt === 'timespan') && isInteger(rt)) return `(${left} // ${right})`;
    return `(CAST(${left} AS DOUBLE) / ${right})`;
  }
  if (op === '%' && (lt === 'real' || rt === 'real')) return `fmod(${left}, ${right})`;
  return `(${left} ${op} ${right})`;
}

function comparison(node: KNode, scope: ScalarScope): string {
  const leftNode = child(node, 'Left') as KNode;
  const rightNode = child(node, 'Right') as KNode;
  const lt = typeOf(leftNode);
  const rt = typeOf(rightNode);
  let left = scalar(leftNode, scope);
  let right = scalar(rightNode, scope);
  if (lt === 'dynamic' && rt !== 'dynamic') left = fromDynamic(left, rt);
  if (rt === 'dynamic' && lt !== 'dynamic') right = fromDynamic(right, lt);
  if (lt === 'dynamic' && rt === 'dynamic') {
    left = `CAST(${left} AS VARCHAR)`;
    right = `CAST(${right} AS VARCHAR)`;
  }
  return `(${left} ${COMPARISON[kindOf(node)] as string} ${right})`;
}

function inList(node: KNode, scope: ScalarScope): string {
  const kind = kindOf(node);
  const ci = kind === 'InCsExpression' ? false : kind.includes('Cs') ? false : kind === 'InExpression' || kind === 'NotInExpression' ? false : true;
  const not = kind.startsWith('Not');
  const leftNode = child(node, 'Left') as KNode;
  const leftType = typeOf(leftNode);
  let left = scalar(leftNode, scope);
  const list = child(node, 'Right') as KNode;
  const items = children(list, 'Expressions').map((item) => {
    let sql = scalar(item, scope);
    if (typeOf(item) === 'dynamic' && leftType !== 'dynamic') sql = fromDynamic(sql, leftType);
    return ci ? `lower(${sql})` : sql;
  });
  if (leftType === 'dynamic') left = fromDynamic(left, typeOf(children(list, 'Expressions')[0] ?? leftNode));
  if (ci) left = `lower(${left})`;
  if (items.length === 0) return not ? 'TRUE' : 'FALSE';
  return `(${left} ${not ? 'NOT IN' : 'IN'} (${items.join(', ')}))`;
}

function between(node: KNode, scope: ScalarScope): string {
  const leftNode = child(node, 'Left') as KNode;
  const couple = child(node, 'Right') as KNode;
  const left = scalar(leftNode, scope);
  const firstNode = child(couple, 'First') as KNode;
  const secondNode = child(couple, 'Second') as KNode;
  const first = scalar(firstNode, scope);
  let second = scalar(secondNode, scope);
  if (typeOf(leftNode) === 'datetime' && typeOf(secondNode) === 'timespan') second = `(${first} + to_microseconds(CAST(${second} // 10 AS BIGINT)))`;
  const test = `(${left} BETWEEN ${first} AND ${second})`;
  return kindOf(node) === 'NotBetweenExpression' ? `(NOT ${test})` : test;
}

/** The JSON path step of `a.b` / `a["b"]` / `a[0]`. */
function pathStep(selector: KNode, scope: ScalarScope): string {
  const kind = kindOf(selector);
  if (kind === 'NameReference' || kind === 'BracketedName') {
    const name = (selector as unknown as { SimpleName: string }).SimpleName;
    return str(`$."${name.replaceAll('"', '\\"')}"`);
  }
  if (kind === 'BracketedExpression') {
    const inner = child(selector, 'Expression') as KNode;
    const type = typeOf(inner);
    const value = scalar(inner, scope);
    if (type === 'string') return `'$."' || replace(${value}, '"', '\\"') || '"'`;
    return `'$[' || CASE WHEN ${value} < 0 THEN '#' || CAST(${value} AS VARCHAR) ELSE CAST(${value} AS VARCHAR) END || ']'`;
  }
  throw unsupported(selector);
}

export function scalar(node: KNode, scope: ScalarScope): string {
  const kind = kindOf(node);
  if (kind.endsWith('LiteralExpression') && kind !== 'TypeOfLiteralExpression' && kind !== 'CompoundStringLiteralExpression') return literal(node);
  const text = stringOperator(kind, '', '');
  if (text !== null) {
    const leftNode = child(node, 'Left') as KNode;
    const rightNode = child(node, 'Right') as KNode;
    const left = typeOf(leftNode) === 'string' ? scalar(leftNode, scope) : fromDynamic(toDynamic(scalar(leftNode, scope), typeOf(leftNode)), 'string');
    const right = typeOf(rightNode) === 'string' ? scalar(rightNode, scope) : fromDynamic(toDynamic(scalar(rightNode, scope), typeOf(rightNode)), 'string');
    return stringOperator(kind, left, right) as string;
  }
  if (ARITHMETIC[kind]) return arithmetic(node, scope);
  if (COMPARISON[kind]) return comparison(node, scope);
  switch (kind) {
    case 'CompoundStringLiteralExpression':
      return `(${
        children(node, 'Tokens')
          .map((token) => str(token.ValueText ?? ''))
          .join(' || ') || "''"
      })`;
    case 'ParenthesizedExpression':
      return `(${scalar(child(node, 'Expression') as KNode, scope)})`;
    case 'NameReference':
      return nameReference(node, scope);
    case 'BracketedExpression':
      return scalar(child(node, 'Expression') as KNode, scope);
    case 'AndExpression':
      return `(${scalar(child(node, 'Left') as KNode, scope)} AND ${scalar(child(node, 'Right') as KNode, scope)})`;
    case 'OrExpression':
      return `(${scalar(child(node, 'Left') as KNode, scope)} OR ${scalar(child(node, 'Right') as KNode, scope)})`;
    case 'UnaryMinusExpression':
      return `(-${scalar(child(node, 'Expression') as KNode, scope)})`;
    case 'UnaryPlusExpression':
      return scalar(child(node, 'Expression') as KNode, scope);
    case 'EqualTildeExpression':
    case 'BangTildeExpression': {
      const test = `(lower(${scalar(child(node, 'Left') as KNode, scope)}) = lower(${scalar(child(node, 'Right') as KNode, scope)}))`;
      return kind === 'BangTildeExpression' ? `(NOT ${test})` : test;
    }
    case 'MatchesRegexExpression':
      return `regexp_matches(${scalar(child(node, 'Left') as KNode, scope)}, ${scalar(child(node, 'Right') as KNode, scope)})`;
    case 'LikeExpression':
    case 'NotLikeExpression':
    case 'LikeCsExpression':
    case 'NotLikeCsExpression': {
      const op = kind.includes('Cs') ? 'LIKE' : 'ILIKE';
      return `(${scalar(child(node, 'Left') as KNode, scope)} ${kind.startsWith('Not') ? 'NOT ' : ''}${op} ${scalar(child(node, 'Right') as KNode, scope)})`;
    }
    case 'InExpression':
    case 'NotInExpression':
    case 'InCsExpression':
    case 'NotInCsExpression':
      return inList(node, scope);
    case 'BetweenExpression':
    case 'NotBetweenExpression':
      return between(node, scope);
    case 'HasAnyExpression':
    case 'HasAllExpression': {
      const left = scalar(child(node, 'Left') as KNode, scope);
      const items = children(child(node, 'Right') as KNode, 'Expressions').map((item) => termMatch('has', `coalesce(${left}, '')`, scalar(item, scope), true));
      if (items.length === 0) return 'FALSE';
      return `(${items.join(kind === 'HasAnyExpression' ? ' OR ' : ' AND ')})`;
    }
    case 'DynamicExpression':
      return dynamicLiteral(node);
    case 'PathExpression':
    case 'ElementExpression': {
      const base = child(node, 'Expression') as KNode;
      const selector = child(node, 'Selector') as KNode;
      return `json_extract(${toDynamic(scalar(base, scope), typeOf(base))}, ${pathStep(selector, scope)})`;
    }
    case 'FunctionCallExpression':
      return callFunction(node, scope);
    default:
      throw unsupported(node);
  }
}

function nameReference(node: KNode, scope: ScalarScope): string {
  const name = (node as unknown as { SimpleName: string }).SimpleName;
  if (scope.columns.has(name)) return ident(name);
  if (scope.lets.has(name)) return scope.lets.get(name) as string;
  throw new ServiceError('kql_error', `unknown name ${name}`, { name });
}
