/**
 * Scalar expressions of the Kusto syntax tree as DuckDB SQL. Names resolve only
 * to the columns of the input and to scalar `let`s (through the symbols the
 * analyzer bound); functions only to the table in functions.ts. Anything else
 * is refused with `kql_error`, never passed through as text.
 */
import { ServiceError } from '../../runtime/errors.js';
import { callFunction } from './functions.js';
import { seriesCall } from './series-functions.js';
import { child, children, kindOf, type KNode } from './kusto.js';
import type { Relation } from './relation.js';
import { starMatch } from './search.js';
import { toScalar } from './toscalar.js';
import { datetimeText, duckType, ident, str, timespanTicks, typedNull } from './sql-text.js';
import { stringOperator, termMatch } from './string-operators.js';

export interface ScalarScope {
  /** columns of the input row, by Kusto name */
  readonly columns: ReadonlySet<string>;
  /** scalar lets, by name, as SQL */
  readonly lets: ReadonlyMap<string, string>;
  /** the input carries `__ord` (window functions follow it) */
  readonly ordered?: boolean;
  /** computes `sql` as a helper column in a CTE before this expression (a window over a window); returns its name as SQL */
  readonly pre?: (sql: string) => string;
  /** `step.name` references of a scan's state: step name -> declared name -> SQL (scan.ts) */
  readonly steps?: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** translates a tabular expression into the query's CTE chain (toscalar) */
  readonly tabular?: (node: KNode) => Relation;
  /** inside summarize: the SQL of an aggregation function call (null when the call is a scalar function) */
  readonly aggregate?: (call: KNode) => string | null;
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
      return `coalesce(CASE json_type(${sql}) WHEN 'VARCHAR' THEN (${sql}) ->> '$' WHEN 'NULL' THEN '' ELSE CAST(${sql} AS VARCHAR) END, '')`;
    case 'datetime':
      return `TRY_CAST(regexp_replace((${sql}) ->> '$', '(Z|[+-]00:?00)$', '') AS TIMESTAMP)`;
    case 'long':
    case 'int':
      return `(CASE json_type(${sql}) WHEN 'VARCHAR' THEN ${stringToInteger(`((${sql}) ->> '$')`, type)} WHEN 'BOOLEAN' THEN CAST(CAST((${sql}) ->> '$' AS BOOLEAN) AS ${duckType(type)}) WHEN 'DOUBLE' THEN TRY_CAST(trunc(CAST((${sql}) ->> '$' AS DOUBLE)) AS ${duckType(type)}) WHEN 'BIGINT' THEN TRY_CAST((${sql}) ->> '$' AS ${duckType(type)}) WHEN 'UBIGINT' THEN TRY_CAST((${sql}) ->> '$' AS ${duckType(type)}) END)`;
    case 'real':
    case 'decimal':
      return `(CASE json_type(${sql}) WHEN 'VARCHAR' THEN ${stringToReal(`((${sql}) ->> '$')`)} WHEN 'BOOLEAN' THEN CAST(CAST((${sql}) ->> '$' AS BOOLEAN) AS DOUBLE) WHEN 'ARRAY' THEN NULL WHEN 'OBJECT' THEN NULL ELSE TRY_CAST((${sql}) ->> '$' AS DOUBLE) END)`;
    case 'bool':
      return `(CASE json_type(${sql}) WHEN 'BOOLEAN' THEN CAST((${sql}) ->> '$' AS BOOLEAN) WHEN 'VARCHAR' THEN ${stringToBool(`((${sql}) ->> '$')`)} WHEN 'BIGINT' THEN CAST((${sql}) ->> '$' AS BIGINT) <> 0 WHEN 'UBIGINT' THEN TRUE WHEN 'DOUBLE' THEN CAST((${sql}) ->> '$' AS DOUBLE) <> 0 END)`;
    default:
      return `TRY_CAST((${sql}) ->> '$' AS ${duckType(type)})`;
  }
}

/**
 * fromDynamic of a column (named once per use, so cheap to name again): a JSON string without
 * escapes is the text between its quotes, read without parsing the JSON (mv-expand's elements are
 * mostly such strings); everything else goes through fromDynamic.
 */
export function fromDynamicColumn(column: string, type: string): string {
  if (type !== 'string' && type !== 'guid') return fromDynamic(column, type);
  return `(CASE WHEN starts_with(${column}, '"') AND ends_with(${column}, '"') AND NOT contains(${column}, '\\') THEN (CAST(${column} AS VARCHAR))[2:-2] ELSE ${fromDynamic(column, type)} END)`;
}

/** The text without surrounding blanks (spaces, tabs, line ends), as Kusto's parsers skip them. */
const trimmed = (sql: string): string => `trim(${sql}, ' ' || chr(9) || chr(10) || chr(13))`;

/** Kusto's string to int/long: decimal digits or 0x hex only. */
export function stringToInteger(sql: string, type: string): string {
  const t = duckType(type);
  const text = trimmed(sql);
  return `(CASE WHEN regexp_matches(${text}, '^[+-]?[0-9]+$') THEN TRY_CAST(${text} AS ${t}) WHEN regexp_matches(${text}, '^0[xX][0-9a-fA-F]+$') THEN TRY_CAST(TRY_CAST(${text} AS UBIGINT) AS ${t}) END)`;
}

/** Kusto's string to real: no digit separators or binary literals. */
export function stringToReal(sql: string): string {
  return `(CASE WHEN regexp_matches(trim(${sql}), '^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?$') THEN TRY_CAST(trim(${sql}) AS DOUBLE) WHEN regexp_matches(trim(${sql}), '^([+-]?(Infinity|inf|Inf)|nan|NaN)$') THEN TRY_CAST(trim(${sql}) AS DOUBLE) END)`;
}

/** Kusto's string to bool: true/false in any case, or an integer (non-zero is true). */
export function stringToBool(sql: string): string {
  return `(CASE lower(${sql}) WHEN 'true' THEN TRUE WHEN 'false' THEN FALSE ELSE ${stringToInteger(sql, 'long')} <> 0 END)`;
}

/** Kusto's timespan text (`[-][d.]hh:mm[:ss[.fffffff]]`) as BIGINT ticks, in SQL. */
export function stringToTimespan(sql: string): string {
  const re = "'^(-?)(?:([0-9]+)\\.)?([0-9]{1,2}):([0-9]{1,2})(?::([0-9]{1,2})(?:\\.([0-9]{1,7}))?)?$'";
  const part = (group: number): string => `coalesce(TRY_CAST(nullif(regexp_extract(trim(${sql}), ${re}, ${group}), '') AS BIGINT), 0)`;
  const fraction = `coalesce(TRY_CAST(nullif(rpad(regexp_extract(trim(${sql}), ${re}, 6), 7, '0'), '0000000') AS BIGINT), 0)`;
  const ticks = `(${part(2)} * 864000000000 + ${part(3)} * 36000000000 + ${part(4)} * 600000000 + ${part(5)} * 10000000 + ${fraction})`;
  // or a literal's form: a number and a unit (`1d`, `-1.5h`, `90s`, `10ms`)
  const unitRe = "'^([+-]?[0-9]+(?:[.][0-9]+)?)(d|h|m|s|ms)$'";
  const unit = `CASE regexp_extract(trim(${sql}), ${unitRe}, 2) WHEN 'd' THEN 864000000000 WHEN 'h' THEN 36000000000 WHEN 'm' THEN 600000000 WHEN 's' THEN 10000000 ELSE 10000 END`;
  const literal = `CAST(round(CAST(regexp_extract(trim(${sql}), ${unitRe}, 1) AS DOUBLE) * ${unit}) AS BIGINT)`;
  return `(CASE WHEN regexp_matches(trim(${sql}), ${re}) THEN (CASE WHEN regexp_extract(trim(${sql}), ${re}, 1) = '-' THEN -1 ELSE 1 END) * ${ticks} WHEN regexp_matches(trim(${sql}), ${unitRe}) THEN ${literal} END)`;
}

/** Kusto ticks (100 ns since 0001-01-01) of a TIMESTAMP. */
const EPOCH_TICKS = 621355968000000000n;
export const ticksOf = (sql: string): string => `(epoch_us(${sql}) * 10 + ${EPOCH_TICKS})`;
export const fromTicks = (sql: string): string => `make_timestamp(CAST((${sql} - ${EPOCH_TICKS}) // 10 AS BIGINT))`;

/** Kusto's timespan text `[-][d.]hh:mm:ss[.fffffff]` of BIGINT ticks, in SQL. */
export function timespanText(sql: string): string {
  const a = `abs(${sql})`;
  const two = (x: string): string => `lpad(CAST(${x} AS VARCHAR), 2, '0')`;
  return `(CASE WHEN ${sql} IS NULL THEN NULL ELSE (CASE WHEN ${sql} < 0 THEN '-' ELSE '' END) || (CASE WHEN ${a} >= 864000000000 THEN CAST(${a} // 864000000000 AS VARCHAR) || '.' ELSE '' END) || ${two(`(${a} // 36000000000) % 24`)} || ':' || ${two(`(${a} // 600000000) % 60`)} || ':' || ${two(`(${a} // 10000000) % 60`)} || (CASE WHEN ${a} % 10000000 <> 0 THEN '.' || lpad(CAST(${a} % 10000000 AS VARCHAR), 7, '0') ELSE '' END) END)`;
}

/** Kusto's datetime text (ISO, 7 fractional digits, Z). */
export const datetimeString = (sql: string): string => `(strftime(${sql}, '%Y-%m-%dT%H:%M:%S.%f') || '0Z')`;

/** Any value as JSON (for dynamic contexts). */
export function toDynamic(sql: string, type: string): string {
  if (type === 'dynamic') return sql;
  if (type === 'datetime') return `to_json(${datetimeString(sql)})`;
  if (type === 'timespan') return `to_json(${timespanText(sql)})`;
  // JSON has no NaN or infinities: Kusto's dynamic holds them as the strings it prints
  if (type === 'real' || type === 'decimal')
    return `(CASE WHEN isnan(${sql}) THEN to_json('NaN') WHEN ${sql} = 'inf'::DOUBLE THEN to_json('Infinity') WHEN ${sql} = '-inf'::DOUBLE THEN to_json('-Infinity') ELSE to_json(${sql}) END)`;
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
      const infinity = /^([+-]?)inf(inity)?$/i.exec(text.trim());
      if (infinity) return `CAST('${infinity[1] === '-' ? '-inf' : 'inf'}' AS DOUBLE)`;
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
const isReal = (type: string): boolean => type === 'real' || type === 'decimal';

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
  // Kusto computes int arithmetic in 64 bits (int(2147483647) + int(1) is 2147483648)
  if (lt === 'int' && op !== '/') left = `CAST(${left} AS BIGINT)`;
  if (rt === 'int' && op !== '/') right = `CAST(${right} AS BIGINT)`;
  if (lt === 'datetime' && rt === 'datetime' && op === '-') return `((epoch_us(${left}) - epoch_us(${right})) * 10)`;
  if (lt === 'datetime' && rt === 'timespan') return `(${left} ${op} to_microseconds(CAST(${right} // 10 AS BIGINT)))`;
  if (lt === 'timespan' && rt === 'datetime' && op === '+') return `(${right} + to_microseconds(CAST(${left} // 10 AS BIGINT)))`;
  if (op === '/') {
    if (lt === 'timespan' && rt === 'timespan') return `(CAST(${left} AS DOUBLE) / ${right})`;
    if ((isInteger(lt) || lt === 'timespan') && isInteger(rt)) return `(${left} // ${right})`;
    return `(CAST(${left} AS DOUBLE) / ${right})`;
  }
  if (op === '%' && (isReal(lt) || isReal(rt))) return `fmod(fmod(${left}, ${right}) + abs(${right}), abs(${right}))`;
  if (op === '%') return `((${left} % ${right} + abs(${right})) % abs(${right}))`;
  if (isInteger(lt) && isInteger(rt)) return wrapLong(`(CAST(${left} AS HUGEINT) ${op} ${right})`);
  return `(${left} ${op} ${right})`;
}

/** Kusto's long arithmetic wraps around (9223372036854775807 + 1 is -9223372036854775808); DuckDB's raises: computed in 128 bits, folded back */
const wrapLong = (hugeint: string): string =>
  `CAST(((${hugeint} + 9223372036854775808) % 18446744073709551616 + 18446744073709551616) % 18446744073709551616 - 9223372036854775808 AS BIGINT)`;

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
  const op = COMPARISON[kindOf(node)] as string;
  // NaN compares false to everything (DuckDB orders it above every number), != true
  let test = `(${left} ${op} ${right})`;
  if (isReal(lt) || isReal(rt))
    test = op === '<>' ? `(${test} OR isnan(${left}) OR isnan(${right}))` : `(${test} AND NOT isnan(${left}) AND NOT isnan(${right}))`;
  if ((op !== '=' && op !== '<>') || (lt === 'string' && rt === 'string')) return test;
  // null == x is false and null != x true; only null against null stays null
  const otherNull = isNullable(leftNode) && isNullable(rightNode) ? `WHEN ${left} IS NULL AND ${right} IS NULL THEN NULL ` : '';
  return `(CASE ${otherNull}WHEN ${left} IS NULL OR ${right} IS NULL THEN ${op === '=' ? 'FALSE' : 'TRUE'} ELSE ${test} END)`;
}

/** Whether an operand can be null (a non-null literal cannot). */
const isNullable = (node: KNode): boolean => !kindOf(node).endsWith('LiteralExpression') || kindOf(node) === 'NullLiteralExpression';

function inList(node: KNode, scope: ScalarScope): string {
  const kind = kindOf(node);
  const ci = (child(node, 'Operator')?.Text ?? '').includes('~');
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
  // a null is in no list (so !in holds for it)
  return `coalesce(${left} ${not ? 'NOT IN' : 'IN'} (${items.join(', ')}), ${not ? 'TRUE' : 'FALSE'})`;
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
    if (kindOf(leftNode) === 'StarExpression') return starMatch(node, scope);
    const rightNode = child(node, 'Right') as KNode;
    const left = typeOf(leftNode) === 'string' ? scalar(leftNode, scope) : fromDynamic(toDynamic(scalar(leftNode, scope), typeOf(leftNode)), 'string');
    const right = typeOf(rightNode) === 'string' ? scalar(rightNode, scope) : fromDynamic(toDynamic(scalar(rightNode, scope), typeOf(rightNode)), 'string');
    const literalText = kindOf(rightNode) === 'StringLiteralExpression' ? (child(rightNode, 'Token')?.ValueText ?? undefined) : undefined;
    return stringOperator(kind, left, right, literalText) as string;
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
    case 'UnaryMinusExpression': {
      const operand = child(node, 'Expression') as KNode;
      const sql = scalar(operand, scope);
      // an int is negated in 64 bits (-int(-2147483648) is 2147483648), a long wraps
      return isInteger(typeOf(operand)) ? wrapLong(`(-CAST(${sql} AS HUGEINT))`) : `(-${sql})`;
    }
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
      const items = children(child(node, 'Right') as KNode, 'Expressions').map((item) =>
        termMatch(
          'has',
          `coalesce(${left}, '')`,
          scalar(item, scope),
          true,
          kindOf(item) === 'StringLiteralExpression' ? (child(item, 'Token')?.ValueText ?? undefined) : undefined,
        ),
      );
      if (items.length === 0) return 'FALSE';
      return `(${items.join(kind === 'HasAnyExpression' ? ' OR ' : ' AND ')})`;
    }
    case 'DynamicExpression':
      return dynamicLiteral(node);
    case 'PathExpression':
    case 'ElementExpression': {
      const base = child(node, 'Expression') as KNode;
      const selector = child(node, 'Selector') as KNode;
      const step = scope.steps?.get((base as unknown as { SimpleName?: string }).SimpleName ?? '');
      const stepValue = step?.get((selector as unknown as { SimpleName?: string }).SimpleName ?? '');
      if (step && stepValue === undefined) throw unsupported(selector);
      if (stepValue !== undefined) return stepValue;
      return `json_extract(${toDynamic(scalar(base, scope), typeOf(base))}, ${pathStep(selector, scope)})`;
    }
    case 'FunctionCallExpression':
      return seriesCall(node, scope) ?? callFunction(node, scope);
    case 'ToScalarExpression':
      return toScalar(node, scope);
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
