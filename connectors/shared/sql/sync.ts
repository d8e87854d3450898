/**
 * ETL for a SQL source: its schemas, tables, columns and foreign keys, in
 * the source's realm. The graph model:
 *
 *   (:Database {_key: "<kind>://<host>:<port>/<database>", name, engine, host})
 *     -[:HAS_SCHEMA]-> (:Schema {_key: "<db key>/<schema>", name})
 *     -[:HAS_TABLE]->  (:Table  {_key: "<db key>/<schema>.<table>", name, schema, kind, columns})
 *     -[:HAS_COLUMN]-> (:Column {_key: "<table key>.<column>", name, type, nullable, primary_key})
 *   (:Table)-[:REFERENCES {constraint, columns, referenced_columns}]->(:Table)
 *   (:Column)-[:REFERENCES {constraint}]->(:Column)
 *
 * Keys name the server and database, so two sources on one server share
 * nodes and a service node elsewhere can link to `Table:<key>` ("which
 * services read table X").
 */
import type { GraphNodeInput, GraphRelationshipInput, SyncContext, SyncReport } from '../../contract.js';
import type { SqlEngine, TableOutline } from './engine.js';

/** nodes and relationships are written in batches of this many */
const BATCH = 500;

function databaseKey(kind: string, host: string, port: number, database: string): string {
  return `${kind}://${host.toLowerCase()}:${port}/${database}`;
}

function outlineGraph(engine: SqlEngine, dbKey: string, database: string, host: string, tables: readonly TableOutline[]) {
  const nodes: GraphNodeInput[] = [{ label: 'Database', properties: { _key: dbKey, name: database, engine: engine.kind, host, source: engine.kind } }];
  const relationships: GraphRelationshipInput[] = [];
  const schemas = new Set<string>();
  const tableKey = (schema: string, table: string): string => `${dbKey}/${schema}.${table}`;
  for (const table of tables) {
    const schemaKey = `${dbKey}/${table.schema}`;
    if (!schemas.has(table.schema)) {
      schemas.add(table.schema);
      nodes.push({ label: 'Schema', properties: { _key: schemaKey, name: table.schema, source: engine.kind } });
      relationships.push({ type: 'HAS_SCHEMA', from_label: 'Database', from_key: dbKey, to_label: 'Schema', to_key: schemaKey });
    }
    const key = tableKey(table.schema, table.name);
    nodes.push({
      label: 'Table',
      properties: { _key: key, name: table.name, schema: table.schema, kind: table.kind, columns: table.columns.length, source: engine.kind },
    });
    relationships.push({ type: 'HAS_TABLE', from_label: 'Schema', from_key: schemaKey, to_label: 'Table', to_key: key });
    for (const column of table.columns) {
      const columnKey = `${key}.${column.name}`;
      nodes.push({
        label: 'Column',
        properties: { _key: columnKey, name: column.name, type: column.type, nullable: column.nullable, primary_key: column.primary_key },
      });
      relationships.push({ type: 'HAS_COLUMN', from_label: 'Table', from_key: key, to_label: 'Column', to_key: columnKey });
    }
    for (const fk of table.foreign_keys) {
      const target = tableKey(fk.references.schema, fk.references.table);
      relationships.push({
        type: 'REFERENCES',
        from_label: 'Table',
        from_key: key,
        to_label: 'Table',
        to_key: target,
        properties: { constraint: fk.name, columns: fk.columns.join(','), referenced_columns: fk.references.columns.join(',') },
      });
      fk.columns.forEach((column, index) => {
        const referenced = fk.references.columns[index];
        if (referenced === undefined) return;
        relationships.push({
          type: 'REFERENCES',
          from_label: 'Column',
          from_key: `${key}.${column}`,
          to_label: 'Column',
          to_key: `${target}.${referenced}`,
          properties: { constraint: fk.name },
        });
      });
    }
  }
  return { nodes, relationships, schemas: schemas.size };
}

export function sqlSync(engine: SqlEngine) {
  return async (ctx: SyncContext): Promise<SyncReport> => {
    ctx.progress(0, 'reading the catalog');
    const { outline, host, port } = await engine.readOnly(ctx, async (session) => ({
      outline: await engine.outline(session),
      host: session.connection.host,
      port: session.connection.port,
    }));
    const dbKey = databaseKey(engine.kind, host, port, outline.database);
    const graph = outlineGraph(engine, dbKey, outline.database, host, outline.tables);
    if (ctx.graph) {
      for (let i = 0; i < graph.nodes.length; i += BATCH) {
        ctx.signal.throwIfAborted();
        await ctx.graph.upsertNodes(graph.nodes.slice(i, i + BATCH));
        ctx.progress((0.5 * (i + BATCH)) / graph.nodes.length, 'writing nodes');
      }
      for (let i = 0; i < graph.relationships.length; i += BATCH) {
        ctx.signal.throwIfAborted();
        await ctx.graph.upsertRelationships(graph.relationships.slice(i, i + BATCH));
      }
    }
    ctx.progress(1, 'done');
    const columns = outline.tables.reduce((sum, table) => sum + table.columns.length, 0);
    const foreignKeys = outline.tables.reduce((sum, table) => sum + table.foreign_keys.length, 0);
    return {
      nodes: graph.nodes.length,
      relationships: graph.relationships.length,
      details: { database: dbKey, schemas: graph.schemas, tables: outline.tables.length, columns, foreign_keys: foreignKeys },
    };
  };
}
