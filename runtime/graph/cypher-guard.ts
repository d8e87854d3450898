/**
 * What a user's Cypher query may do, decided from its clauses after string
 * literals, back-quoted names and comments are blanked out (so a property
 * called `created_at` or the text 'DELETE me' is not a write).
 *
 * This decides the permission (graph:read vs graph:write); the Kùzu store
 * also runs read queries in a READ ONLY transaction, so the engine refuses a
 * write this scan missed. Clauses that reach outside the realm's database
 * (files, other databases, extensions, settings, transactions) are refused
 * for everyone.
 */
import { ServiceError } from '../errors.js';

export type CypherKind = 'read' | 'write';

const WRITE_WORDS = new Set(['CREATE', 'MERGE', 'SET', 'DELETE', 'REMOVE']);
/** the service owns the schema (tables grow as records arrive): no DDL from users */
const SCHEMA_WORDS = new Set(['DROP', 'ALTER', 'TABLE', 'MACRO', 'SEQUENCE']);
/** reach outside the realm's own graph, or manage the session */
const REFUSED_WORDS = new Set([
  'LOAD', 'COPY', 'ATTACH', 'USE', 'INSTALL', 'EXPORT', 'IMPORT', 'CHECKPOINT', 'BEGIN', 'COMMIT', 'ROLLBACK', 'PROFILE', 'EXPLAIN',
]);
/** read-only table functions a query may CALL */
const READ_PROCEDURES = new Set(['QUERY_FTS_INDEX', 'SHOW_TABLES', 'TABLE_INFO', 'SHOW_CONNECTION', 'SHOW_INDEXES']);

/** the query with strings, back-quoted names and comments replaced by spaces */
export function blankLiterals(query: string): string {
  let out = '';
  let index = 0;
  while (index < query.length) {
    const char = query[index]!;
    const next = query[index + 1];
    if (char === '/' && next === '/') {
      const end = query.indexOf('\n', index);
      const stop = end === -1 ? query.length : end;
      out += ' '.repeat(stop - index);
      index = stop;
    } else if (char === '/' && next === '*') {
      const end = query.indexOf('*/', index + 2);
      const stop = end === -1 ? query.length : end + 2;
      out += ' '.repeat(stop - index);
      index = stop;
    } else if (char === "'" || char === '"' || char === '`') {
      let stop = index + 1;
      while (stop < query.length && query[stop] !== char) stop += query[stop] === '\\' && char !== '`' ? 2 : 1;
      stop = Math.min(stop + 1, query.length);
      // keep the quotes so `a'x'b` still separates words
      out += `${char}${' '.repeat(Math.max(0, stop - index - 2))}${stop - index >= 2 ? char : ''}`;
      index = stop;
    } else {
      out += char;
      index += 1;
    }
  }
  return out;
}

/** `read` or `write`; throws 400 `validation_error` for a refused clause or several statements */
export function classifyCypher(query: string): CypherKind {
  const code = blankLiterals(query);
  const statements = code.split(';').filter((part) => part.trim().length > 0);
  if (statements.length > 1) {
    throw new ServiceError('validation_error', 'send one Cypher statement per request (no ";" between statements)');
  }
  // a word after `.` or `:` is a property, label or type name, one before `:` a map key: not a clause
  const words = code.toUpperCase().match(/(?<![\w$])(?<![.:]\s*)[A-Z_][A-Z0-9_]*(?!\s*:|[\w$])/g) ?? [];
  let kind: CypherKind = 'read';
  for (let position = 0; position < words.length; position += 1) {
    const word = words[position]!;
    if (REFUSED_WORDS.has(word)) refuse(word);
    if (SCHEMA_WORDS.has(word)) {
      throw new ServiceError('validation_error', `the Cypher clause ${word} is not allowed: the service manages the graph schema (tables and properties are created as records arrive)`, { clause: word });
    }
    if (word === 'DETACH') {
      if (words[position + 1] !== 'DELETE') refuse(word);
      kind = 'write';
    } else if (WRITE_WORDS.has(word)) {
      kind = 'write';
    } else if (word === 'CALL') {
      const procedure = words[position + 1] ?? '';
      if (!READ_PROCEDURES.has(procedure)) refuse(`CALL ${procedure}`.trim());
    }
  }
  return kind;
}

function refuse(clause: string): never {
  throw new ServiceError('validation_error', `the Cypher clause ${clause} is not allowed here (it reaches outside the realm's graph)`, {
    clause,
    allowed_procedures: [...READ_PROCEDURES].map((name) => name.toLowerCase()),
  });
}
