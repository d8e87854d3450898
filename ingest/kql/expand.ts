/** mv-expand (arrays and bags, zipped when several) and parse (simple, regex and relaxed modes). */
import { ServiceError } from '../../runtime/errors.js';
import { child, children, kindOf, type KNode } from './kusto.js';
import { from, ORD, selectList, type Column, type Relation } from './relation.js';
import { fromDynamic, fromDynamicColumn, scalar, toDynamic, typeOf } from './scalar.js';
import { declaredName, scopeOf, valueOf, type OperatorContext } from './operators.js';
import { duckType, ident, str } from './sql-text.js';

/**
 * The elements an mv-expand yields for one value (`json`, a column), given `list`, the value cast to
 * JSON[] (NULL when it is not an array): array items (a JSON null item is NULL, as an absent value),
 * bag entries as one-key bags, or the value itself. The cast parses an array once; json_type,
 * json_array_length and json_extract each parsed it again.
 */
const elements = (json: string, list: string): string =>
  `CASE WHEN ${json} IS NULL THEN [NULL::JSON] WHEN ${list} IS NOT NULL THEN (CASE WHEN len(${list}) = 0 THEN [NULL::JSON] ELSE ${list} END) WHEN json_type(${json}) = 'OBJECT' THEN list_transform(json_keys(${json}), k -> json_object(k, json_extract(${json}, '$."' || k || '"'))) ELSE [${json}] END`;

export function mvExpand(node: KNode, input: Relation, ctx: OperatorContext, output: Column[]): Relation {
  const scope = scopeOf(input, ctx);
  const expanded = new Map<string, string>();
  const lists: string[] = [];
  // each expanded value, then its JSON[] cast, as hidden columns of two stages before the unnest (each computed once)
  const values: string[] = [];
  for (const item of children(node, 'Expressions')) {
    const named = child(item, 'Expression') as KNode;
    const value = valueOf(named);
    const name = declaredName(named) ?? (value as unknown as { SimpleName?: string }).SimpleName;
    if (!name) throw new ServiceError('kql_error', 'mv-expand: name the expanded column (x = expression)');
    const index = values.length;
    values.push(`${toDynamic(scalar(value, scope), typeOf(value))} AS ${ident(`__mv_value${index}`)}`);
    lists.push(elements(ident(`__mv_value${index}`), ident(`__mv_list${index}`)));
    expanded.set(name, `unnest(${lists.at(-1) as string})`);
  }
  const valued = ctx.chain.add(`SELECT ${[selectList(input), ...values].join(', ')} FROM ${from(input)}`, input.columns, input.ordered);
  const casts = values.map((_, index) => `TRY_CAST(${ident(`__mv_value${index}`)} AS JSON[]) AS ${ident(`__mv_list${index}`)}`);
  const carried = values.map((_, index) => ident(`__mv_value${index}`));
  const listed = ctx.chain.add(`SELECT ${[selectList(input), ...carried, ...casts].join(', ')} FROM ${from(valued)}`, input.columns, input.ordered);
  // with_itemindex: the element's position, unnested beside the elements (unnests in one SELECT run in step)
  const itemIndex = children(node, 'Parameters').find((parameter) => (child(parameter, 'Name') as KNode).ToString().trim() === 'with_itemindex');
  const indexName = itemIndex ? (child(itemIndex, 'Expression') as KNode).ToString().trim() : null;
  const inner = input.columns.map((column) =>
    expanded.has(column.name) ? `${expanded.get(column.name) as string} AS ${ident(column.name)}` : ident(column.name),
  );
  for (const [name, sql] of expanded) if (!input.columns.some((column) => column.name === name)) inner.push(`${sql} AS ${ident(name)}`);
  if (indexName) inner.push(`unnest(generate_series(0, greatest(${lists.map((list) => `len(${list})`).join(', ')}) - 1)) AS ${ident(indexName)}`);
  if (input.ordered) inner.push(ident(ORD));
  const unnested = ctx.chain.add(`SELECT ${inner.join(', ')} FROM ${from(listed)}`, input.columns, input.ordered);
  const list = output.map((column) => {
    if (!expanded.has(column.name)) return ident(column.name);
    return `${fromDynamicColumn(ident(column.name), column.type)} AS ${ident(column.name)}`;
  });
  if (input.ordered) list.push(ident(ORD));
  return ctx.chain.add(`SELECT ${list.join(', ')} FROM ${from(unnested)}`, output, input.ordered);
}

const escapeRegex = (text: string): string => text.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/** parse's `kind` (simple, regex, relaxed) and regex `flags`. */
function parseMode(node: KNode): { kind: string; flags: string } {
  const mode = { kind: 'simple', flags: '' };
  for (const parameter of children(node, 'Parameters')) {
    const name = (child(child(parameter, 'Name') as KNode, 'SimpleName') as unknown as string | null) ?? '';
    const value = child(parameter, 'Expression') as KNode;
    const text = kindOf(value) === 'StringLiteralExpression' ? (child(value, 'Token')?.ValueText ?? '') : value.ToString().trim();
    if (name === 'kind' && ['simple', 'regex', 'relaxed'].includes(text)) mode.kind = text;
    else if (name === 'flags' && /^[imsU]*$/.test(text)) mode.flags = text;
    else throw new ServiceError('kql_error', `parse: unsupported parameter ${name}=${text}`, { parameter: name });
  }
  return mode;
}

/**
 * parse: literal parts must appear in order; each column takes the text up to the next literal.
 * simple: literals match as text, from the start; relaxed: the same, a value of the wrong type is null
 * instead of failing the match; regex: literals are regular expressions, the match may start anywhere,
 * a string column (and `*`) takes as much as the rest allows (what Kusto returns), `flags` apply.
 */
export function parse(node: KNode, input: Relation, ctx: OperatorContext, output: Column[]): Relation {
  const scope = scopeOf(input, ctx);
  const sourceNode = child(node, 'Expression') as KNode;
  const source = typeOf(sourceNode) === 'string' ? scalar(sourceNode, scope) : fromDynamic(toDynamic(scalar(sourceNode, scope), typeOf(sourceNode)), 'string');
  const mode = parseMode(node);
  const regexMode = mode.kind === 'regex';
  const patterns = children(node, 'Patterns');
  let regex = '';
  const groups: Column[] = [];
  patterns.forEach((pattern, index) => {
    const kind = kindOf(pattern);
    const last = index === patterns.length - 1;
    const rest = regexMode || last ? '.*' : '.*?';
    if (kind === 'StringLiteralExpression') {
      const text = child(pattern, 'Token')?.ValueText ?? '';
      regex += regexMode ? `(?:${text})` : escapeRegex(text);
    } else if (kind === 'StarExpression') regex += rest;
    else if (kind === 'NameAndTypeDeclaration' || kind === 'NameDeclaration') {
      const nameNode = kind === 'NameDeclaration' ? pattern : (child(pattern, 'Name') as KNode);
      const name = child(nameNode, 'SimpleName') as unknown as string;
      const column = output.find((candidate) => candidate.name === name);
      if (!column) throw new ServiceError('kql_error', `parse: unknown column ${name}`);
      groups.push(column);
      const integer = (column.type === 'long' || column.type === 'int') && mode.kind !== 'relaxed';
      regex += integer ? '(-?[0-9]+)' : `(${rest})`;
    } else throw new ServiceError('kql_error', `parse: unsupported pattern part ${kind}`);
  });
  const pattern = str(regexMode ? `${mode.flags ? `(?${mode.flags})` : ''}${regex}` : `^${regex}`);
  const options = regexMode ? "''" : "'s'";
  const matched = `regexp_matches(${source}, ${pattern}, ${options})`;
  const computed = new Map(
    groups.map((column, index) => {
      const text = `regexp_extract(${source}, ${pattern}, ${index + 1}, ${options})`;
      const value =
        column.type === 'string'
          ? `CASE WHEN ${matched} THEN ${text} ELSE '' END`
          : `CASE WHEN ${matched} THEN TRY_CAST(${text} AS ${duckType(column.type)}) END`;
      return [column.name, value] as const;
    }),
  );
  const list = output.map((column) => `${computed.get(column.name) ?? ident(column.name)} AS ${ident(column.name)}`);
  if (input.ordered) list.push(ident(ORD));
  return ctx.chain.add(`SELECT ${list.join(', ')} FROM ${from(input)}`, output, input.ordered);
}
