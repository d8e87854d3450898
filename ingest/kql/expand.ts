/** mv-expand (arrays and bags, zipped when several) and parse (simple mode). */
import { ServiceError } from '../../runtime/errors.js';
import { child, children, kindOf, type KNode } from './kusto.js';
import { from, ORD, type Column, type Relation } from './relation.js';
import { fromDynamic, scalar, toDynamic, typeOf } from './scalar.js';
import { declaredName, scopeOf, valueOf, type OperatorContext } from './operators.js';
import { duckType, ident, str } from './sql-text.js';

/** The elements an mv-expand yields for one value: array items, bag entries as one-key bags, or the value itself. */
const elements = (json: string): string =>
  `CASE WHEN ${json} IS NULL THEN [NULL::JSON] WHEN json_type(${json}) = 'ARRAY' THEN (CASE WHEN json_array_length(${json}) = 0 THEN [NULL::JSON] ELSE CAST(json_extract(${json}, '$[*]') AS JSON[]) END) WHEN json_type(${json}) = 'OBJECT' THEN list_transform(json_keys(${json}), k -> json_object(k, json_extract(${json}, '$."' || k || '"'))) ELSE [${json}] END`;

export function mvExpand(node: KNode, input: Relation, ctx: OperatorContext, output: Column[]): Relation {
  const scope = scopeOf(input, ctx);
  const expanded = new Map<string, string>();
  const lists: string[] = [];
  for (const item of children(node, 'Expressions')) {
    const named = child(item, 'Expression') as KNode;
    const value = valueOf(named);
    const name = declaredName(named) ?? (value as unknown as { SimpleName?: string }).SimpleName;
    if (!name) throw new ServiceError('kql_error', 'mv-expand: name the expanded column (x = expression)');
    lists.push(elements(toDynamic(scalar(value, scope), typeOf(value))));
    expanded.set(name, `unnest(${lists.at(-1) as string})`);
  }
  // with_itemindex: the element's position, unnested beside the elements (unnests in one SELECT run in step)
  const itemIndex = children(node, 'Parameters').find((parameter) => (child(parameter, 'Name') as KNode).ToString().trim() === 'with_itemindex');
  const indexName = itemIndex ? (child(itemIndex, 'Expression') as KNode).ToString().trim() : null;
  const inner = input.columns.map((column) =>
    expanded.has(column.name) ? `${expanded.get(column.name) as string} AS ${ident(column.name)}` : ident(column.name),
  );
  for (const [name, sql] of expanded) if (!input.columns.some((column) => column.name === name)) inner.push(`${sql} AS ${ident(name)}`);
  if (indexName) inner.push(`unnest(generate_series(0, greatest(${lists.map((list) => `len(${list})`).join(', ')}) - 1)) AS ${ident(indexName)}`);
  if (input.ordered) inner.push(ident(ORD));
  const unnested = ctx.chain.add(`SELECT ${inner.join(', ')} FROM ${from(input)}`, input.columns, input.ordered);
  const list = output.map((column) => {
    if (!expanded.has(column.name)) return ident(column.name);
    return `${fromDynamic(ident(column.name), column.type)} AS ${ident(column.name)}`;
  });
  if (input.ordered) list.push(ident(ORD));
  return ctx.chain.add(`SELECT ${list.join(', ')} FROM ${from(unnested)}`, output, input.ordered);
}

const escapeRegex = (text: string): string => text.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/** parse (simple mode): literal parts must appear in order; each column takes the text up to the next literal. */
export function parse(node: KNode, input: Relation, ctx: OperatorContext, output: Column[]): Relation {
  const scope = scopeOf(input, ctx);
  const sourceNode = child(node, 'Expression') as KNode;
  const source = typeOf(sourceNode) === 'string' ? scalar(sourceNode, scope) : fromDynamic(toDynamic(scalar(sourceNode, scope), typeOf(sourceNode)), 'string');
  const patterns = children(node, 'Patterns');
  let regex = '';
  const groups: Column[] = [];
  patterns.forEach((pattern, index) => {
    const kind = kindOf(pattern);
    const last = index === patterns.length - 1;
    if (kind === 'StringLiteralExpression') regex += escapeRegex(child(pattern, 'Token')?.ValueText ?? '');
    else if (kind === 'StarExpression') regex += last ? '.*' : '.*?';
    else if (kind === 'NameAndTypeDeclaration' || kind === 'NameDeclaration') {
      const nameNode = kind === 'NameDeclaration' ? pattern : (child(pattern, 'Name') as KNode);
      const name = child(nameNode, 'SimpleName') as unknown as string;
      const column = output.find((candidate) => candidate.name === name);
      if (!column) throw new ServiceError('kql_error', `parse: unknown column ${name}`);
      groups.push(column);
      regex += column.type === 'long' || column.type === 'int' ? '(-?[0-9]+)' : last ? '(.*)' : '(.*?)';
    } else throw new ServiceError('kql_error', `parse: unsupported pattern part ${kind}`);
  });
  const pattern = str(`^${regex}`);
  const matched = `regexp_matches(${source}, ${pattern}, 's')`;
  const computed = new Map(
    groups.map((column, index) => {
      const text = `regexp_extract(${source}, ${pattern}, ${index + 1}, 's')`;
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
