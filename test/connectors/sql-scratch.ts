/**
 * Scratch `orders_test_<random>` databases on the machine's real PostgreSQL
 * and MariaDB servers: a read-only and a read-write login, tables with
 * foreign keys and rows; dropped at the end. `reachable` says why a server
 * cannot be used, for the suite's one SKIP line.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import pg from 'pg';

export interface ScratchDatabase {
  readonly database: string;
  readonly port: number;
  readonly readOnly: { readonly user: string; readonly password: string };
  readonly readWrite: { readonly user: string; readonly password: string };
  /** runs statements as the server's administrator in the scratch database */
  admin(sql: string): Promise<unknown[]>;
  drop(): Promise<void>;
}

const suffix = (): string => randomBytes(4).toString('hex');

const PG_ADMIN = { host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 3000 };
const MY_ADMIN = { host: '127.0.0.1', port: 3306, user: 'root', connectTimeout: 3000 };

/** null when the server answers, else the reason */
export async function postgresUnreachable(): Promise<string | null> {
  const client = new pg.Client(PG_ADMIN);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return `no PostgreSQL server usable at 127.0.0.1:5432 as postgres (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function mysqlUnreachable(): Promise<string | null> {
  try {
    const conn = await mysql.createConnection(MY_ADMIN);
    await conn.end();
    return null;
  } catch (error) {
    return `no MySQL/MariaDB server usable at 127.0.0.1:3306 as root (${(error as Error).message})`;
  }
}

const ORDERS_SCHEMA = (serial: string, money: string) => [
  `CREATE TABLE customers (id ${serial} PRIMARY KEY, name VARCHAR(100) NOT NULL, email VARCHAR(200) UNIQUE)`,
  `CREATE TABLE orders (id ${serial} PRIMARY KEY, customer_id INT NOT NULL, total ${money} NOT NULL, status VARCHAR(20) NOT NULL DEFAULT 'open',
     CONSTRAINT orders_customer_fk FOREIGN KEY (customer_id) REFERENCES customers (id))`,
  'CREATE INDEX orders_status_idx ON orders (status)',
  `CREATE TABLE order_items (id ${serial} PRIMARY KEY, order_id INT NOT NULL, sku VARCHAR(40) NOT NULL, qty INT NOT NULL,
     CONSTRAINT order_items_order_fk FOREIGN KEY (order_id) REFERENCES orders (id))`,
  "INSERT INTO customers (name, email) VALUES ('Ada', 'ada@example.test'), ('Grace', 'grace@example.test'), ('Linus', 'linus@example.test')",
  `INSERT INTO orders (customer_id, total, status) VALUES ${Array.from({ length: 12 }, (_, i) => `(${(i % 3) + 1}, ${(i + 1) * 10}.50, '${i % 4 === 0 ? 'shipped' : 'open'}')`).join(', ')}`,
  "INSERT INTO order_items (order_id, sku, qty) VALUES (1, 'SKU-1', 2), (1, 'SKU-2', 1), (2, 'SKU-1', 5)",
];

export async function createPostgresScratch(): Promise<ScratchDatabase> {
  const id = suffix();
  const database = `orders_test_${id}`;
  const readOnly = { user: `orders_ro_${id}`, password: `ro-${suffix()}` };
  const readWrite = { user: `orders_rw_${id}`, password: `rw-${suffix()}` };
  const root = new pg.Client(PG_ADMIN);
  await root.connect();
  await root.query(`CREATE ROLE ${readOnly.user} LOGIN PASSWORD '${readOnly.password}'`);
  await root.query(`CREATE ROLE ${readWrite.user} LOGIN PASSWORD '${readWrite.password}'`);
  await root.query(`CREATE DATABASE ${database}`);
  const inDb = new pg.Client({ ...PG_ADMIN, database });
  await inDb.connect();
  for (const sql of ORDERS_SCHEMA('SERIAL', 'NUMERIC(10,2)')) await inDb.query(sql);
  await inDb.query(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${readOnly.user}`);
  await inDb.query(`GRANT ALL ON SCHEMA public TO ${readWrite.user}`);
  await inDb.query(`GRANT ALL ON ALL TABLES IN SCHEMA public TO ${readWrite.user}`);
  await inDb.query(`GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO ${readWrite.user}`);
  return {
    database,
    port: 5432,
    readOnly,
    readWrite,
    admin: async (sql) => (await inDb.query(sql)).rows,
    drop: async () => {
      await inDb.end().catch(() => undefined);
      await root.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await root.query(`DROP ROLE IF EXISTS ${readOnly.user}`);
      await root.query(`DROP ROLE IF EXISTS ${readWrite.user}`);
      await root.end();
    },
  };
}

export async function createMysqlScratch(): Promise<ScratchDatabase> {
  const id = suffix();
  const database = `orders_test_${id}`;
  const readOnly = { user: `orders_ro_${id}`, password: `ro-${suffix()}` };
  const readWrite = { user: `orders_rw_${id}`, password: `rw-${suffix()}` };
  const root = await mysql.createConnection(MY_ADMIN);
  await root.query(`CREATE DATABASE ${database}`);
  await root.query(`CREATE USER '${readOnly.user}'@'%' IDENTIFIED BY '${readOnly.password}'`);
  await root.query(`CREATE USER '${readWrite.user}'@'%' IDENTIFIED BY '${readWrite.password}'`);
  await root.query(`GRANT SELECT ON ${database}.* TO '${readOnly.user}'@'%'`);
  await root.query(`GRANT ALL ON ${database}.* TO '${readWrite.user}'@'%'`);
  await root.query(`USE ${database}`);
  for (const sql of ORDERS_SCHEMA('INT AUTO_INCREMENT', 'DECIMAL(10,2)')) await root.query(sql);
  return {
    database,
    port: 3306,
    readOnly,
    readWrite,
    admin: async (sql) => (await root.query(sql))[0] as unknown[],
    drop: async () => {
      await root.query(`DROP DATABASE IF EXISTS ${database}`);
      await root.query(`DROP USER IF EXISTS '${readOnly.user}'@'%'`);
      await root.query(`DROP USER IF EXISTS '${readWrite.user}'@'%'`);
      await root.end();
    },
  };
}
