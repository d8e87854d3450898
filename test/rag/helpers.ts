/** Helpers of the RAG suites: a one-page PDF built by hand, collections, documents and waiting for them to index. */
import { expect } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import type { Session, TestServer } from '../helpers/server.js';

/** A valid one-page PDF showing `line` (objects, xref offsets and trailer computed, no library). */
export function onePagePdf(line: string): Buffer {
  const text = line.replace(/[()\\]/g, (char) => `\\${char}`);
  const stream = `BT /F1 12 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(body));
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body);
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

export async function createCollection(server: TestServer, session: Session, body: Record<string, unknown>): Promise<string> {
  const created = await server.request('POST', '/rag/collections', { token: session.token, body });
  expect(created.status, created.text).toBe(201);
  return created.body.id as string;
}

/** Adds a document and returns its id (202 accepted for indexing). */
export async function addDocument(server: TestServer, session: Session, collection: string, body: Record<string, unknown>): Promise<string> {
  const added = await server.request('POST', `/rag/collections/${collection}/documents`, { token: session.token, body });
  expect(added.status, added.text).toBe(202);
  return added.body.id as string;
}

/** Waits until the document is `ready` or `failed` and returns it. */
export function settled(server: TestServer, session: Session, collection: string, document: string): Promise<any> {
  return eventually(
    async () => {
      const read = await server.request('GET', `/rag/collections/${collection}/documents/${document}`, { token: session.token });
      return read.body.status === 'ready' || read.body.status === 'failed' ? read.body : undefined;
    },
    { what: `document ${document} to be indexed` },
  );
}

export const RUNBOOK = `# Payments runbook

Owner: the payments team. Page them through the on-call rota.

## Disk full on the database host

When the database host reports the disk is full, first check which volume filled:

\`\`\`sh
df -h /var/lib/postgresql
\`\`\`

Then rotate the write-ahead log archive: delete archived WAL segments older than seven days
and restart the archiver. Never delete the live pg_wal directory.

## Certificate expiry

Certificates are renewed by cert-manager. If a certificate expired, delete the failed
CertificateRequest so cert-manager issues a new one.
`;
