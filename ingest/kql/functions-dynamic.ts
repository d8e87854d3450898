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
  return `(CASE json_type(${v}) WHEN 'NULL' THEN 'null' WHEN 'OBJECT' THEN 'dictionary' WHEN 'ARRAY' THEN 'array' WHEN 'VARCHAR' THEN 'string' WHEN 'BIGINT' THEN 'long' WHEN 'UBIGINT' THEN 'long' WHEN 'DOUBLE' THEN 'double' WHEN 'BOOLEAN' THEN 'bool' ELSE 'null' END)`;
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

/** A list without repeated elements, in first-appearance order (DuckDB's list_distinct reorders). */
const distinctOf = (list: string): string => `list_filter(${list}, (x, i) -> list_position(${list}, x) = i)`;

/** Argument i's elements, or an empty list when it is not an array. */
const listArg = (c: Call, index: number): string => `coalesce(${elementsOf(c.as(index, 'dynamic'))}, CAST([] AS JSON[]))`;

/** set_intersect / set_difference: the first array's distinct elements found in every other / in none. */
function setFilter(c: Call, keep: boolean): string {
  const others = c.args.slice(1).map((_, i) => listArg(c, i + 1));
  const test = others.map((other) => `${keep ? '' : 'NOT '}list_contains(${other}, x)`).join(' AND ');
  return arrayOf(`list_filter(${distinctOf(listArg(c, 0))}, x -> ${test})`);
}

/** array_shift_left(a, n [, fill]): element i becomes a[i + n]; past either end, `fill` (null). */
function shift(c: Call, direction: 1 | -1): string {
  const list = elementsOf(c.as(0, 'dynamic'));
  const n = `(${direction === 1 ? '' : '-'}CAST(${c.arg(1)} AS BIGINT))`;
  const fill = c.args.length > 2 ? c.as(2, 'dynamic') : 'CAST(NULL AS JSON)';
  const at = `(i + ${n})`;
  return `(CASE WHEN ${list} IS NOT NULL THEN to_json(list_transform(range(len(${list})), i -> CASE WHEN ${at} >= 0 AND ${at} < len(${list}) THEN ${list}[${at} + 1] ELSE ${fill} END)) END)`;
}

/** array_rotate_left(a, n): the first n elements move to the end (negative n rotates right). */
function rotate(c: Call, direction: 1 | -1): string {
  const list = elementsOf(c.as(0, 'dynamic'));
  const n = `len(${list})`;
  const k = `((${direction === 1 ? '' : '-'}CAST(${c.arg(1)} AS BIGINT) % greatest(${n}, 1) + greatest(${n}, 1)) % greatest(${n}, 1))`;
  return `(CASE WHEN ${list} IS NOT NULL THEN to_json(list_concat(list_slice(${list}, ${k} + 1, ${n}), list_slice(${list}, 1, ${k}))) END)`;
}

/** array_split(a, indices): the pieces between the split indices (one index or an array of them). */
function arraySplit(c: Call): string {
  const list = elementsOf(c.as(0, 'dynamic'));
  const indices = typeOf(c.args[1] as KNode) === 'dynamic' ? `list_transform(${listArg(c, 1)}, e -> CAST(e AS BIGINT))` : `[CAST(${c.arg(1)} AS BIGINT)]`;
  const bounds = `list_concat([0], list_transform(${indices}, e -> least(greatest(e, 0), len(${list}))), [len(${list})])`;
  return `(CASE WHEN ${list} IS NOT NULL THEN to_json(list_transform(range(len(${bounds}) - 1), k -> to_json(list_slice(${list}, ${bounds}[k + 1] + 1, ${bounds}[k + 2])))) END)`;
}

/** zip(a, b, ...): [[a0, b0, ...], ...] as long as the longest array, missing places null. */
function zip(c: Call): string {
  const lists = c.args.map((_, i) => listArg(c, i));
  const longest = lists.length > 1 ? `greatest(${lists.map((list) => `len(${list})`).join(', ')})` : `len(${lists[0] as string})`;
  return `to_json(list_transform(range(${longest}), i -> [${lists.map((list) => `${list}[i + 1]`).join(', ')}]))`;
}

/** array_iff(conditions, whenTrue, whenFalse): element-wise choice; a scalar branch applies to every place. */
function arrayIff(c: Call): string {
  const conditions = elementsOf(c.as(0, 'dynamic'));
  const branch = (index: number): string =>
    typeOf(c.args[index] as KNode) === 'dynamic' ? `${listArg(c, index)}[i + 1]` : toDynamic(c.arg(index), typeOf(c.args[index] as KNode));
  return `(CASE WHEN ${conditions} IS NOT NULL THEN to_json(list_transform(range(len(${conditions})), i -> CASE WHEN ${fromDynamic(`${conditions}[i + 1]`, 'bool')} THEN ${branch(1)} ELSE ${branch(2)} END)) END)`;
}

/** bag_merge(b1, b2, ...): keys in first-appearance order, the first bag holding a key gives its value. */
function bagMerge(c: Call): string {
  const bags = c.args.map((_, i) => `(CASE WHEN json_type(${c.as(i, 'dynamic')}) = 'OBJECT' THEN ${c.as(i, 'dynamic')} END)`);
  const keys = distinctOf(bags.map((bag) => `coalesce(json_keys(${bag}), CAST([] AS VARCHAR[]))`).reduce((a, b) => `list_concat(${a}, ${b})`));
  const value = `coalesce(${bags.map((bag) => `json_extract(${bag}, '$."' || replace(k, '"', '\\"') || '"')`).join(', ')})`;
  return `to_json(map(${keys}, list_transform(${keys}, k -> ${value})))`;
}

export const DYNAMIC_FUNCTIONS: Record<string, Translate> = {
  set_intersect: (c) => setFilter(c, true),
  set_difference: (c) => setFilter(c, false),
  jaccard_index: (c) => {
    const a = distinctOf(listArg(c, 0));
    const b = distinctOf(listArg(c, 1));
    const union = `len(${distinctOf(`list_concat(${listArg(c, 0)}, ${listArg(c, 1)})`)})`;
    return `(CASE WHEN ${union} = 0 THEN NULL ELSE CAST(len(list_filter(${a}, x -> list_contains(${b}, x))) AS DOUBLE) / ${union} END)`;
  },
  zip,
  array_iff: arrayIff,
  array_split: arraySplit,
  array_shift_left: (c) => shift(c, 1),
  array_shift_right: (c) => shift(c, -1),
  array_rotate_left: (c) => rotate(c, 1),
  array_rotate_right: (c) => rotate(c, -1),
  gettype: typeName,
  bag_keys: (c) => `(CASE WHEN json_type(${c.arg(0)}) = 'OBJECT' THEN to_json(json_keys(${c.arg(0)})) END)`,
  bag_merge: bagMerge,
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
  set_union: (c) => arrayOf(distinctOf(c.args.map((_, i) => listArg(c, i)).reduce((a, b) => `list_concat(${a}, ${b})`))),
  strcat_array: (c) => `array_to_string(list_transform(${elementsOf(c.as(0, 'dynamic'))}, e -> ${fromDynamic('e', 'string')}), ${c.as(1, 'string')})`,
  dynamic_to_json: (c) => `coalesce(CAST(${c.as(0, 'dynamic')} AS VARCHAR), 'null')`,
  parse_json: (c) =>
    typeOf(c.args[0] as KNode) === 'dynamic'
      ? c.arg(0)
      : // TRY_CAST fails exactly where json_valid does, and parses the text once instead of twice
        `(CASE WHEN ${c.as(0, 'string')} = '' THEN NULL ELSE coalesce(TRY_CAST(${c.as(0, 'string')} AS JSON), to_json(${c.as(0, 'string')})) END)`,
  todynamic: (c) => DYNAMIC_FUNCTIONS['parse_json']!(c),
  bag_pack: (c) => `json_object(${c.args.map((_, i) => (i % 2 === 0 ? c.as(i, 'string') : toDynamic(c.arg(i), typeOf(c.args[i] as KNode)))).join(', ')})`,
  pack: (c) => DYNAMIC_FUNCTIONS['bag_pack']!(c),
  pack_array: (c) => `json_array(${c.args.map((arg, i) => toDynamic(c.arg(i), typeOf(arg))).join(', ')})`,
  array_length: (c) => `CASE WHEN json_type(${c.arg(0)}) = 'ARRAY' THEN CAST(json_array_length(${c.arg(0)}) AS BIGINT) END`,
};
