/**
 * parse-kv: one column per listed key, extracted from a string by a regular
 * expression built per key (first occurrence wins, as Kusto documents; a key
 * missing from the text gives '' for a string column and null otherwise).
 *
 * - delimiters mode (`pair_delimiter`, `kv_delimiter`, optional `quote`,
 *   `escape`, `greedy`): the key starts the text or follows a pair delimiter,
 *   whitespace around keys and values is ignored, an unquoted value ends at
 *   the next pair delimiter (greedy: at the last one before the next
 *   `key<kv_delimiter>`), a quoted value at its closing quote;
 * - regex mode (`regex`): the pattern's first group is the key, its second
 *   the value.
 * Delimiters, quotes and key names are the parser's literal values, regex-
 * escaped and sent as escaped SQL strings; a `regex` is sent as a string too.
 */
import { ServiceError } from '../../runtime/errors.js';
import { child, children, kindOf, type KNode } from './kusto.js';
import { scopeOf, type OperatorContext } from './operators.js';
import { from, ORD, type Column, type Relation } from './relation.js';
import { fromDynamic, scalar, stringToBool, stringToInteger, stringToReal, stringToTimespan, toDynamic, typeOf } from './scalar.js';
import { duckType, ident, str } from './sql-text.js';

interface KvOptions {
  pair?: string;
  kv?: string;
  quotes: [string, string][];
  escapes: string[];
  greedy: boolean;
  regex?: string;
}

const reEscape = (text: string): string => text.replace(/[\\^$.|?*+()[\]{}-]/g, '\\$&');

/** A character class holding `chars` (each escaped). */
const charClass = (chars: string, negated = false): string =>
  `[${negated ? '^' : ''}${[...chars].map((c) => `\\x{${c.codePointAt(0)?.toString(16)}}`).join('')}]`;

function options(node: KNode): KvOptions {
  const result: KvOptions = { quotes: [], escapes: [], greedy: false };
  const clause = child(node, 'WithClause');
  for (const property of clause ? children(clause, 'Properties') : []) {
    const name = (child(child(property, 'Name') as KNode, 'SimpleName') as unknown as string | null) ?? '';
    const value = child(property, 'Expression') as KNode;
    const kind = kindOf(value);
    const text = kind === 'StringLiteralExpression' ? (child(value, 'Token')?.ValueText ?? '') : value.ToString().trim();
    if (name === 'pair_delimiter') result.pair = text;
    else if (name === 'kv_delimiter') result.kv = text;
    else if (name === 'quote' && text.length >= 1 && text.length <= 2) result.quotes.push([text[0] as string, (text[1] ?? text[0]) as string]);
    else if (name === 'escape' && text.length === 1) result.escapes.push(text);
    else if (name === 'greedy') result.greedy = text.toLowerCase() === 'true';
    else if (name === 'regex') result.regex = text;
    else throw new ServiceError('kql_error', `parse-kv: unsupported option ${name}`, { option: name });
  }
  return result;
}

/** The value part of the pattern: one group per quoted form, then the unquoted one (one of them holds the value; the others are ''). */
function valuePattern(opts: KvOptions): { pattern: string; groups: number } {
  const escapes = opts.escapes.join('');
  const quoted = opts.quotes.map(([open, close]) => {
    const body = escapes ? `(?:${charClass(close + escapes, true)}|${charClass(escapes)}.)*` : `${charClass(close, true)}*`;
    return `${reEscape(open)}(${body})${reEscape(close)}`;
  });
  return { pattern: [...quoted, '(.*?)'].join('|'), groups: quoted.length + 1 };
}

/** What ends a value: the next pair delimiter (greedy: the last one before the next `key<kv>`) or the end of the text. */
function valueEnd(opts: KvOptions, pair: string, kv: string): string {
  if (!opts.greedy) return `\\s*(?:${reEscape(pair)}|$)`;
  if ([...pair].length !== 1 || [...kv].length !== 1) throw new ServiceError('kql_error', 'parse-kv: greedy=true needs one-character delimiters');
  return `\\s*(?:${reEscape(pair)}${charClass(pair + kv, true)}*${reEscape(kv)}|$)`;
}

/** Text to the column's type (Kusto's conversions of strings). */
function fromText(sql: string, type: string): string {
  switch (type) {
    case 'string':
      return sql;
    case 'long':
    case 'int':
      return stringToInteger(sql, type);
    case 'real':
    case 'decimal':
      return stringToReal(sql);
    case 'bool':
      return stringToBool(sql);
    case 'timespan':
      return stringToTimespan(sql);
    case 'datetime':
      return `TRY_CAST(regexp_replace(trim(${sql}), '(Z|[+-]00:?00)$', '') AS TIMESTAMP)`;
    case 'dynamic':
      return `coalesce(TRY_CAST(${sql} AS JSON), to_json(${sql}))`;
    default:
      return `TRY_CAST(${sql} AS ${duckType(type)})`;
  }
}

/** The SQL of one key's value as text, or NULL when the key is not in the text. */
function delimitedValue(source: string, key: string, opts: KvOptions): string {
  const { pair, kv } = opts;
  if (!pair || !kv) throw new ServiceError('kql_error', 'parse-kv: give pair_delimiter and kv_delimiter, or regex');
  const keyPart = opts.quotes.length
    ? `(?:${[...opts.quotes.map(([open, close]) => `${reEscape(open)}${reEscape(key)}${reEscape(close)}`), reEscape(key)].join('|')})`
    : reEscape(key);
  const value = valuePattern(opts);
  const pattern = str(`(?:^|${reEscape(pair)})\\s*${keyPart}\\s*${reEscape(kv)}\\s*(?:${value.pattern})${valueEnd(opts, pair, kv)}`);
  const groups = Array.from({ length: value.groups }, (_, index) => `regexp_extract(${source}, ${pattern}, ${index + 1})`);
  let text = groups.join(' || ');
  if (opts.escapes.length) text = `regexp_replace(${text}, ${str(`${charClass(opts.escapes.join(''))}(.)`)}, '\\1', 'g')`;
  return `CASE WHEN regexp_matches(${source}, ${pattern}) THEN ${text} END`;
}

/** regex mode: the value of the first match whose key group equals `key`. */
function regexValue(source: string, key: string, regex: string): string {
  const pattern = str(regex);
  const keys = `regexp_extract_all(${source}, ${pattern}, 1)`;
  const values = `regexp_extract_all(${source}, ${pattern}, 2)`;
  return `${values}[list_position(${keys}, ${str(key)})]`;
}

export function parseKv(node: KNode, input: Relation, ctx: OperatorContext, output: Column[]): Relation {
  const scope = scopeOf(input, ctx);
  const sourceNode = child(node, 'Expression') as KNode;
  const type = typeOf(sourceNode);
  const source = `coalesce(${type === 'string' ? scalar(sourceNode, scope) : fromDynamic(toDynamic(scalar(sourceNode, scope), type), 'string')}, '')`;
  const opts = options(node);
  const keys = children(child(node, 'Keys') as KNode, 'Columns');
  const computed = new Map<string, string>();
  for (const declaration of keys) {
    const name = child(child(declaration, 'Name') as KNode, 'SimpleName') as unknown as string;
    const column = output.find((candidate) => candidate.name === name);
    if (!column) throw new ServiceError('kql_error', `parse-kv: unknown column ${name}`);
    const text = opts.regex !== undefined ? regexValue(source, name, opts.regex) : delimitedValue(source, name, opts);
    computed.set(name, column.type === 'string' ? `coalesce(${text}, '')` : fromText(text, column.type));
  }
  const list = output.map((column) => `${computed.get(column.name) ?? ident(column.name)} AS ${ident(column.name)}`);
  if (input.ordered) list.push(ident(ORD));
  return ctx.chain.add(`SELECT ${list.join(', ')} FROM ${from(input)}`, output, input.ordered);
}
