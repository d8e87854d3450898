/**
 * KQL (as Kusto.Language's analyzed syntax tree) to one DuckDB SELECT: one CTE
 * per operator, Kusto's output columns and types. Tables are reached only
 * through `tables` (the realm's own, bound by the analyzer's symbols), always
 * as quoted identifiers of the realm's schema; a name the analyzer did not bind
 * to one of them is refused.
 */
import { ServiceError } from '../../runtime/errors.js';
import { expectOne, operator } from './dispatch.js';
import { child, children, columnsOf, kindOf, type Analyzed, type KNode } from './kusto.js';
import { CteChain, from, ORD, type Column, type Relation } from './relation.js';
import { scalar } from './scalar.js';
import { dataTable, print, range } from './sources.js';
import { ident } from './sql-text.js';

export interface SourceTable {
  /** the Kusto table name */
  readonly name: string;
  /** the quoted, schema-qualified DuckDB name */
  readonly qualified: string;
  /** each column with its Kusto type and the SQL reading it */
  readonly columns: readonly { readonly name: string; readonly type: string; readonly sql: string }[];
}

export interface Translation {
  readonly sql: string;
  readonly columns: Column[];
  /** `render`'s chart kind, when the query ends with one */
  readonly chart: string | null;
  /** the rows come in an order the query made (sort, top, serialize...); otherwise any order is Kusto's answer */
  readonly ordered: boolean;
}

export class Translator {
  readonly chain = new CteChain();
  readonly lets = new Map<string, string>();
  readonly tableLets = new Map<string, Relation>();
  chart: string | null = null;

  constructor(private readonly tables: ReadonlyMap<string, SourceTable>) {}

  tabular(node: KNode): Relation {
    const kind = kindOf(node);
    switch (kind) {
      case 'ParenthesizedExpression':
        return this.tabular(child(node, 'Expression') as KNode);
      case 'PipeExpression': {
        const input = this.tabular(child(node, 'Expression') as KNode);
        return operator(this, child(node, 'Operator') as KNode, input, columnsOf(node.ResultType));
      }
      case 'NameReference':
        return this.named(node);
      case 'DataTableExpression':
        return dataTable(node, this.chain, this.lets);
      case 'PrintOperator':
        return print(node, this.chain, this.lets, (expression) => this.tabular(expression));
      case 'RangeOperator':
        return range(node, this.chain, this.lets);
      case 'UnionOperator':
      case 'MaterializeExpression':
        return operator(this, node, null, columnsOf(node.ResultType));
      default:
        return expectOne(node);
    }
  }

  private named(node: KNode): Relation {
    const name = (node as unknown as { SimpleName: string }).SimpleName;
    const bound = this.tableLets.get(name);
    if (bound) return bound;
    const table = this.tables.get(name);
    // the analyzer resolved this name to a table symbol; only the realm's own tables were given to it
    if (!table || node.ReferencedSymbol?.Name !== name) throw new ServiceError('kql_error', `unknown table ${name}`, { table: name });
    const list = table.columns.map((column) => `${column.sql} AS ${ident(column.name)}`);
    return this.chain.add(`SELECT ${list.join(', ')} FROM ${table.qualified}`, table.columns, false);
  }

  let(node: KNode): void {
    const name = child(child(node, 'Name') as KNode, 'SimpleName') as unknown as string;
    const value = child(node, 'Expression') as KNode;
    const type = value.ResultType;
    if (type && (type as unknown as { Columns?: unknown }).Columns !== undefined && kindOf(value) !== 'FunctionDeclaration') {
      this.tableLets.set(name, this.tabular(value));
      return;
    }
    if (kindOf(value) === 'FunctionDeclaration') throw new ServiceError('kql_error', 'user-defined functions in let are not supported');
    this.lets.set(name, `(${scalar(value, { columns: new Set(), lets: this.lets, tabular: (expression) => this.tabular(expression) })})`);
  }

  finish(result: Relation, limit: number): Translation {
    const list = result.columns.map((column) => `${presentSql(ident(column.name), column.type)} AS ${ident(column.name)}`);
    const order = result.ordered ? ` ORDER BY ${ident(ORD)}` : '';
    const sql = `WITH ${this.chain.ctes.join(',\n')}\nSELECT ${list.join(', ') || 'NULL AS "__empty"'} FROM ${from(result)}${order} LIMIT ${limit}`;
    return { sql, columns: result.columns.map((column) => ({ name: column.name, type: column.type })), chart: this.chart, ordered: result.ordered };
  }
}

/** A result column as the JSON answer carries it (datetimes as Kusto's ISO text, dynamic as JSON text). */
function presentSql(sql: string, type: string): string {
  if (type === 'datetime') return `strftime(${sql}, '%Y-%m-%dT%H:%M:%S.%f') || '0Z'`;
  if (type === 'dynamic') return `CAST(${sql} AS VARCHAR)`;
  if (type === 'string') return `coalesce(${sql}, '')`;
  return sql;
}

/** Translates an analyzed query without errors; the SELECT returns at most `limit` rows. */
export function translate(analyzed: Analyzed, tables: ReadonlyMap<string, SourceTable>, limit: number): Translation {
  const translator = new Translator(tables);
  let result: Relation | null = null;
  for (const statement of children(analyzed.root, 'Statements')) {
    const kind = kindOf(statement);
    if (kind === 'LetStatement') translator.let(statement);
    else if (kind === 'ExpressionStatement') result = translator.tabular(child(statement, 'Expression') as KNode);
    else throw new ServiceError('kql_error', `unsupported statement ${kind}`);
  }
  if (!result) throw new ServiceError('kql_error', 'the query has no tabular expression to return');
  return translator.finish(result, limit);
}
