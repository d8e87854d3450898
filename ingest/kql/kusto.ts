/**
 * Microsoft's KQL parser and semantic analyzer (`@kusto/language-service-next`,
 * a Bridge.NET build of Kusto.Language) loaded into this process. The Bridge.NET
 * runtime (`bridge.js`) must be loaded first: it defines the globals the
 * library module extends. The first parse compiles a lot of code (~2-7 s, and
 * ~200 MB of resident memory): `warmKusto()` pays it off the request path, at
 * start when some organization uses the Advanced tier (gateway/app.ts),
 * otherwise the first KQL request pays it. The database symbol and the
 * `GlobalState` holding it are built once per schema (`globalsFor`).
 *
 * The syntax tree is reached through the narrow `KNode` view below: typed
 * children by property name (`child`, `children`), kinds by name.
 */
import { createRequire } from 'node:module';

export interface KSymbol {
  readonly Name: string;
  readonly Kind: number;
  readonly Columns?: { readonly Count: number; getItem(index: number): KSymbol };
  readonly Type?: KSymbol;
}

export interface KNode {
  readonly Kind: number;
  readonly IsToken: boolean;
  readonly IsMissing: boolean;
  readonly ChildCount: number;
  readonly TextStart: number;
  readonly Text?: string | null;
  readonly ValueText?: string | null;
  readonly ResultType?: KSymbol | null;
  readonly ReferencedSymbol?: KSymbol | null;
  GetChild(index: number): KNode | null;
  ToString(): string;
}

interface KList {
  readonly Count: number;
  getItem(index: number): unknown;
}

interface KDiagnostic {
  readonly Message: string;
  readonly Start: number;
  readonly Length: number;
  readonly Severity: string;
  readonly Code: string;
}

interface KCode {
  readonly Syntax: KNode;
  GetDiagnostics(): KList;
}

interface KustoApi {
  Language: {
    KustoCode: { ParseAndAnalyze(text: string, globals: unknown): KCode };
    GlobalState: { Default: { WithDatabase(database: unknown): unknown } };
    Syntax: { SyntaxKind: Record<string, number> };
    Symbols: {
      ScalarTypes: Record<string, KSymbol>;
      ColumnSymbol: new (name: string, type: KSymbol, description: null, original: null, source: null, examples: null) => KSymbol;
      TableSymbol: { $ctor4: new (name: string, columns: KSymbol[]) => KSymbol };
      DatabaseSymbol: { ctor: new (name: string, members: KSymbol[]) => KSymbol };
    };
  };
}

let api: KustoApi | null = null;
let kindNames: string[] = [];

function kusto(): KustoApi {
  if (api) return api;
  const require = createRequire(import.meta.url);
  require('@kusto/language-service-next/bridge.js');
  require('@kusto/language-service-next/Kusto.Language.Bridge.js');
  api = (globalThis as unknown as { Kusto: KustoApi }).Kusto;
  const kinds = api.Language.Syntax.SyntaxKind;
  kindNames = [];
  for (const [name, value] of Object.entries(kinds)) if (typeof value === 'number') kindNames[value] = name;
  return api;
}

/** The syntax kind's name (`FilterOperator`, `AddExpression`, ...). */
export const kindOf = (node: KNode): string => kindNames[node.Kind] ?? 'Unknown';

/** A named child (`Condition`, `Expression`, ...), or null. */
export function child(node: KNode, name: string): KNode | null {
  const value = (node as unknown as Record<string, unknown>)[name];
  return (value ?? null) as KNode | null;
}

/** The elements of a list-valued child, separators dropped. */
export function children(node: KNode, name: string): KNode[] {
  const list = (node as unknown as Record<string, unknown>)[name] as KList | null | undefined;
  if (!list) return [];
  const result: KNode[] = [];
  for (let index = 0; index < list.Count; index += 1) {
    const item = list.getItem(index) as KNode & { Element?: KNode };
    const element = kindNames[item.Kind] === 'SeparatedElement' ? child(item, 'Element') : item;
    if (element) result.push(element);
  }
  return result;
}

/** The columns of a tabular symbol. */
export function columnsOf(symbol: KSymbol | null | undefined): { name: string; type: string }[] {
  const columns = symbol?.Columns;
  if (!columns) return [];
  const result: { name: string; type: string }[] = [];
  for (let index = 0; index < columns.Count; index += 1) {
    const column = columns.getItem(index);
    result.push({ name: column.Name, type: column.Type?.Name ?? 'dynamic' });
  }
  return result;
}

export interface TableSchema {
  readonly name: string;
  /** Kusto scalar type names: string, long, real, datetime, dynamic, ... */
  readonly columns: readonly { readonly name: string; readonly type: string }[];
}

interface KqlDiagnostic {
  readonly message: string;
  readonly code: string;
  /** 1-based */
  readonly line: number;
  readonly column: number;
}

export interface Analyzed {
  readonly root: KNode;
  readonly errors: KqlDiagnostic[];
}

function position(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, offset));
  const lines = before.split('\n');
  return { line: lines.length, column: (lines.at(-1)?.length ?? 0) + 1 };
}

/** The schema as one string: equal strings mean equal database symbols. */
export const schemaKey = (tables: readonly TableSchema[]): string =>
  JSON.stringify(tables.map((table) => [table.name, table.columns.map((column) => [column.name, column.type])]));

/** Most schemas whose GlobalState is kept (each holds its tables' symbols; a schema change makes a new key). */
const GLOBALS_KEPT = 64;
const globalsCache = new Map<string, unknown>();

/** The GlobalState with one database holding `tables`: built once per schema, least recently used dropped. */
function globalsFor(tables: readonly TableSchema[], key: string): unknown {
  const cached = globalsCache.get(key);
  if (cached !== undefined) {
    globalsCache.delete(key);
    globalsCache.set(key, cached);
    return cached;
  }
  const K = kusto();
  const { Symbols } = K.Language;
  const symbols = tables.map(
    (table) =>
      new Symbols.TableSymbol.$ctor4(
        table.name,
        table.columns.map(
          (column) =>
            new Symbols.ColumnSymbol(
              column.name,
              Symbols.ScalarTypes[scalarKey(column.type)] ?? (Symbols.ScalarTypes['Dynamic'] as KSymbol),
              null,
              null,
              null,
              null,
            ),
        ),
      ),
  );
  const database = new Symbols.DatabaseSymbol.ctor('context', symbols);
  const globals = K.Language.GlobalState.Default.WithDatabase(database);
  globalsCache.set(key, globals);
  if (globalsCache.size > GLOBALS_KEPT) globalsCache.delete(globalsCache.keys().next().value as string);
  return globals;
}

/** "A value of type bool expected." */
const KS_BOOL_EXPECTED = 'KS107';

/**
 * Where the analyzer wants a bool that the Kusto engine takes as it is, by offset of the argument:
 * `not("term")` in a search predicate (a bare term, as anywhere in the predicate), and the argument of
 * `count(x)`, which the engine accepts and ignores (it counts rows, nulls included; aggregates.ts).
 */
function engineTakesAsIs(root: KNode): Set<number> {
  const starts = new Set<number>();
  const visit = (node: KNode, inSearch: boolean): void => {
    const kind = kindOf(node);
    const searching = inSearch || kind === 'SearchOperator';
    if (kind === 'FunctionCallExpression') {
      const name = (child(node, 'Name') as unknown as { SimpleName?: string } | null)?.SimpleName;
      const args = children(child(node, 'ArgumentList') as KNode, 'Expressions');
      const only = args.length === 1 ? (args[0] as KNode) : null;
      if (searching && name === 'not' && only && kindOf(only) === 'StringLiteralExpression') starts.add(only.TextStart);
      if (name === 'count' && only) starts.add(only.TextStart);
    }
    for (let index = 0; index < node.ChildCount; index += 1) {
      const next = node.GetChild(index);
      if (next) visit(next, searching);
    }
  };
  visit(root, false);
  return starts;
}

/** Parses and analyzes `text` against one database holding `tables` (`key`: their `schemaKey`, when the caller has it). */
export function analyze(text: string, tables: readonly TableSchema[], key: string = schemaKey(tables)): Analyzed {
  const K = kusto();
  const code = K.Language.KustoCode.ParseAndAnalyze(text, globalsFor(tables, key));
  const list = code.GetDiagnostics();
  const errors: KqlDiagnostic[] = [];
  let terms: Set<number> | undefined;
  for (let index = 0; index < list.Count; index += 1) {
    const diagnostic = list.getItem(index) as KDiagnostic;
    if (diagnostic.Severity !== 'Error') continue;
    if (diagnostic.Code === KS_BOOL_EXPECTED && (terms ??= engineTakesAsIs(code.Syntax)).has(diagnostic.Start)) continue;
    errors.push({ message: diagnostic.Message, code: diagnostic.Code, ...position(text, diagnostic.Start) });
  }
  return { root: code.Syntax, errors };
}

let warming: Promise<number> | null = null;

/**
 * Loads the library and analyzes a few typical queries once, so their code paths are compiled before a
 * request needs them; resolves with the milliseconds it took (once per process, later calls share it).
 * It runs on the event loop (the library is synchronous): call it where a pause of a few seconds is acceptable.
 */
export function warmKusto(): Promise<number> {
  warming ??= new Promise((resolve, reject) => {
    setImmediate(() => {
      try {
        resolve(warmNow());
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
  return warming;
}

function warmNow(): number {
  const started = performance.now();
  const tables: TableSchema[] = [
    {
      name: 'T',
      columns: [
        { name: 'at', type: 'datetime' },
        { name: 'label', type: 'string' },
        { name: 'props', type: 'dynamic' },
      ],
    },
  ];
  for (const query of [
    'T | where label has "x" and at > ago(1d) | extend p = parse_json(props) | project at, label, p',
    'T | summarize n = count(), c = countif(label == "a") by bin(at, 1h) | top 10 by n',
    'T | join kind=inner (datatable(label:string, m:string)["a","b"]) on label | mv-expand x = props to typeof(string) | summarize count() by m, tostring(x)',
  ])
    analyze(query, tables);
  return performance.now() - started;
}

function scalarKey(type: string): string {
  const keys: Record<string, string> = {
    string: 'String',
    long: 'Long',
    int: 'Int',
    real: 'Real',
    bool: 'Bool',
    datetime: 'DateTime',
    timespan: 'TimeSpan',
    dynamic: 'Dynamic',
    guid: 'Guid',
    decimal: 'Decimal',
  };
  return keys[type] ?? 'Dynamic';
}
