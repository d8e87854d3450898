/**
 * A document's bytes as text to chunk: Markdown and plain text as they are,
 * HTML through `html-to-text` (a real HTML parser, headings kept as their
 * own paragraphs), PDF through `unpdf` (pdf.js, text only: no scripts run),
 * JSON pretty-printed and NDJSON one record per paragraph. A format that does
 * not parse is an `unreadable_document` with the parser's reason.
 */
import { compile } from 'html-to-text';
import { extractText, getDocumentProxy } from 'unpdf';
import { DEFAULT_MAX_JSON_DEPTH, findTooDeep } from '../json-depth.js';

export const DOCUMENT_FORMATS = ['text', 'markdown', 'html', 'pdf', 'json', 'ndjson'] as const;
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number];

export class UnreadableDocumentError extends Error {
  constructor(format: DocumentFormat, reason: string) {
    super(`the ${format} document could not be read: ${reason}`);
    this.name = 'UnreadableDocumentError';
  }
}

const htmlText = compile({
  wordwrap: false,
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    { selector: 'script', format: 'skip' },
    { selector: 'style', format: 'skip' },
  ],
});

/** The format a file name or content type names, else null. */
export function formatOf(name: string, contentType?: string): DocumentFormat | null {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const byType: Record<string, DocumentFormat> = {
    'text/markdown': 'markdown',
    'text/html': 'html',
    'application/pdf': 'pdf',
    'application/json': 'json',
    'application/x-ndjson': 'ndjson',
    'application/ndjson': 'ndjson',
    'text/plain': 'text',
  };
  if (byType[type] !== undefined) return byType[type];
  const extension = name.toLowerCase().split('.').pop() ?? '';
  const byExtension: Record<string, DocumentFormat> = {
    md: 'markdown',
    markdown: 'markdown',
    html: 'html',
    htm: 'html',
    pdf: 'pdf',
    json: 'json',
    ndjson: 'ndjson',
    jsonl: 'ndjson',
    txt: 'text',
    text: 'text',
    log: 'text',
  };
  return byExtension[extension] ?? null;
}

function parseJson(text: string, format: DocumentFormat, where: string): unknown {
  if (findTooDeep(Buffer.from(text), DEFAULT_MAX_JSON_DEPTH) !== null)
    throw new UnreadableDocumentError(format, `${where} nests deeper than ${DEFAULT_MAX_JSON_DEPTH}`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UnreadableDocumentError(format, `${where}: ${(error as Error).message}`);
  }
}

/** The text of a document and whether it is Markdown (the chunker reads its structure). */
export async function extractDocumentText(bytes: Uint8Array, format: DocumentFormat): Promise<{ text: string; markdown: boolean }> {
  switch (format) {
    case 'markdown':
      return { text: Buffer.from(bytes).toString('utf8'), markdown: true };
    case 'text':
      return { text: Buffer.from(bytes).toString('utf8'), markdown: false };
    case 'html':
      return { text: htmlText(Buffer.from(bytes).toString('utf8')), markdown: false };
    case 'json':
      return { text: JSON.stringify(parseJson(Buffer.from(bytes).toString('utf8'), format, 'the body'), null, 2), markdown: false };
    case 'ndjson': {
      const lines = Buffer.from(bytes).toString('utf8').split('\n');
      const records = lines
        .map((line, index) => ({ line: line.trim(), index }))
        .filter(({ line }) => line !== '')
        .map(({ line, index }) => JSON.stringify(parseJson(line, format, `line ${index + 1}`)));
      return { text: records.join('\n\n'), markdown: false };
    }
    case 'pdf': {
      try {
        const pdf = await getDocumentProxy(new Uint8Array(bytes), { isEvalSupported: false });
        const { text } = await extractText(pdf, { mergePages: false });
        return { text: text.join('\n\n'), markdown: false };
      } catch (error) {
        throw new UnreadableDocumentError(format, (error as Error).message);
      }
    }
  }
}
