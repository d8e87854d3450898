/** Kusto's functions over dynamic values: arrays, property bags, sets, JSON. Arrays are DuckDB JSON; lists of JSON in between. */
import type { Call, Translate } from './call.js';
import type { KNode } from './kusto.js';
import { fromDynamic, toDynamic, typeOf } from './scalar.js';
import { str } from './sql-text.js';

/** A dynamic array's elements as a DuckDB JSON[] list (NULL when not an array). */
const elementsOf = (sql: string): string => `(CASE WHEN json_type(${sql}) = 'ARRAY' THEN CAST(json_extract(${sql}, '$[*]') AS JSON[]) END)`;

/** A list back to a dynamic array. */
const arrayOf = (list: string): string => `to_json(${list})`;

/** The Kusto type name of a value (gettype). */
function typeName(c: Call): string {
  const type = typeOf(c.args[0] as KNode);
  if (type !== 'dynamic') return str(type === 'int' ? 'int' : type);
  const v = c.arg(0);
  return `(CASE json_type(${v}) WHEN 'NULL' THEN 'null' WHEN 'OBJECT' THEN 'dictionary' WHEN 'ARRAY' THEN 'array' WHEN 'VARCHAR' THEN 'string' WHEN 'BIGINT' THEN 'long' WHEN 'UBIGINT' THEN 'long' WHEN 'DOUBLE' THEN 'real' WHEN 'BOOLEAN' THEN 'bool' ELSE 'null' END)`;
}

/** Kusto sort order of array elements: numbers, then strings, nulls last. */
const sortArray = (c: Call, direction: 'ASC' | 'DESC'): string => {
  const list = elementsOf(c.as(0, 'dynamic'));
  const nulls = c.args.length > 1 ? `CASE WHEN ${c.arg(1)} THEN 'NULLS FIRST' ELSE 'NULLS LAST' END` : null;
  void nulls;
  return arrayOf(
    `list_transform(list_sort(list_transform(${list}, e -> {'n': TRY_CAST(e AS DOUBLE), 's': CASE WHEN json_type(e) = 'VARCHAR' THEN e ->> '$' END, 'e': e}), '${direction}', 'NULLS LAST'), x -> x.e)`,
  );
};

/** array_slice(a, start, end): inclusive bounds, negative counting from the end. */
function arraySlice(c: Call): string {
  const list = elementsOf(c.as(0, 'dynamic'));
  const n = `len(${list})`;
  const start = `(CASE WHEN ${c.arg(1)} < 0 THEN greatest(${n} + ${c.arg(1)}, 0) ELSE ${c.arg(1)} END)`;
  const end = `(CASE WHEN ${c.arg(2)} < 0 THEN ${n} + ${c.arg(2)} ELSE least(${c.arg(2)}, ${n} - 1) END)`;
  return `(CASE WHEN ${list} IS NULL THEN NULL WHEN ${start} > ${end} THEN CAST('[]' AS JSON) ELSE to_json(list_slice(${list}, ${start} + 1, ${end} + 1)) END)`;
}

export const DYNAMIC_FUNCTIONS: Record<string, Translate> = {
  gettype: typeName,
  bag_keys: (c) => `(CASE WHEN json_type(${c.arg(0)}) = 'OBJECT' THEN to_json(json_keys(${c.arg(0)})) END)`,
  bag_merge: (c) => {
    const bags = c.args.map((_, i) => c.as(i, 'dynamic')).reverse();
    return `json_merge_patch(${bags.map((bag) => `coalesce(CASE WHEN json_type(${bag}) = 'OBJECT' THEN ${bag} END, CAST('{}' AS JSON))`).join(', ')})`;
  },
  array_concat: (c) => {
    const lists = c.args.map((_, i) => elementsOf(c.as(i, 'dynamic')));
    return `(CASE WHEN ${lists.map((list) => `${list} IS NULL`).join(' AND ')} THEN NULL ELSE to_json(${lists.map((list) => `coalesce(${list}, CAST([] AS JSON[]))`).reduce((a, b) => `list_concat(${a}, ${b})`)}) END)`;
  },
  array_slice: arraySlice,
  array_reverse: (c) => `to_json(list_reverse(${elementsOf(c.as(0, 'dynamic'))}))`,
  array_sum: (c) => `list_sum(list_transform(${elementsOf(c.as(0, 'dynamic'))}, e -> TRY_CAST(e AS DOUBLE)))`,
  array_sort_asc: (c) => sortArray(c, 'ASC'),
  array_sort_desc: (c) => sortArray(c, 'DESC'),
  array_index_of: (c) =>
    `coalesce(list_position(list_transform(${elementsOf(c.as(0, 'dynamic'))}, e -> CAST(e AS VARCHAR)), CAST(${c.as(1, 'dynamic')} AS VARCHAR)) - 1, -1)`,
  set_has_element: (c) => `list_contains(list_transform(${elementsOf(c.as(0, 'dynamic'))}, e -> CAST(e AS VARCHAR)), CAST(${c.as(1, 'dynamic')} AS VARCHAR))`,
  set_union: (c) =>
    `to_json(list_distinct(${c.args.map((_, i) => `coalesce(${elementsOf(c.as(i, 'dynamic'))}, CAST([] AS JSON[]))`).reduce((a, b) => `list_concat(${a}, ${b})`)}))`,
  strcat_array: (c) => `array_to_string(list_transform(${elementsOf(c.as(0, 'dynamic'))}, e -> ${fromDynamic('e', 'string')}), ${c.as(1, 'string')})`,
  dynamic_to_json: (c) => `coalesce(CAST(${c.as(0, 'dynamic')} AS VARCHAR), 'null')`,
  parse_json: (c) =>
    typeOf(c.args[0] as KNode) === 'dynamic'
      ? c.arg(0)
      : `(CASE WHEN ${c.as(0, 'string')} = '' THEN NULL WHEN json_valid(${c.as(0, 'string')}) THEN CAST(${c.as(0, 'string')} AS JSON) ELSE to_json(${c.as(0, 'string')}) END)`,
  todynamic: (c) => DYNAMIC_FUNCTIONS['parse_json']!(c),
  bag_pack: (c) => `json_object(${c.args.map((_, i) => (i % 2 === 0 ? c.as(i, 'string') : toDynamic(c.arg(i), typeOf(c.args[i] as KNode)))).join(', ')})`,
  pack: (c) => DYNAMIC_FUNCTIONS['bag_pack']!(c),
  pack_array: (c) => `json_array(${c.args.map((arg, i) => toDynamic(c.arg(i), typeOf(arg))).join(', ')})`,
  array_length: (c) => `CASE WHEN json_type(${c.arg(0)}) = 'ARRAY' THEN CAST(json_array_length(${c.arg(0)}) AS BIGINT) END`,
};
