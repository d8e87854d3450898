/**
 * A pg Query that reads at most `rows` rows: Execute asks the server for that
 * many, and when the portal has more (PortalSuspended) the query ends there
 * instead of asking for the next batch, so a huge result never crosses the
 * wire. Always the extended protocol, which refuses several statements in one
 * text ("cannot insert multiple commands into a prepared statement").
 */
import pg from 'pg';

interface Wire {
  sync(): void;
}

export class LimitedQuery extends pg.Query {
  /** true when the server had more rows than were read */
  suspended = false;

  constructor(text: string, values: readonly unknown[], rows: number) {
    super({ text, values: [...values], rowMode: 'array', rows, queryMode: 'extended' } as pg.QueryConfig);
  }

  handlePortalSuspended(connection: Wire): void {
    this.suspended = true;
    connection.sync();
  }

  handleError(error: Error, connection: Wire): void {
    // with `rows` set pg does not pipeline Sync, and after an error it sends the server waits for one
    // (client-side failures, a value that does not serialize or a row that does not parse, are synced by pg itself)
    if (error instanceof pg.DatabaseError) connection.sync();
    (pg.Query.prototype as unknown as { handleError(e: Error, c: Wire): void }).handleError.call(this, error, connection);
  }
}

export interface LimitedResult {
  readonly fields: readonly { name: string; dataTypeID: number }[];
  readonly rows: unknown[][];
  readonly suspended: boolean;
}

/** submits the query on the client and waits for its end */
export function runLimited(client: pg.PoolClient | pg.Client, query: LimitedQuery): Promise<LimitedResult> {
  return new Promise((resolve, reject) => {
    query.on('error', reject);
    query.on('end', (result) => resolve({ fields: result.fields, rows: result.rows as unknown as unknown[][], suspended: query.suspended }));
    client.query(query);
  });
}
