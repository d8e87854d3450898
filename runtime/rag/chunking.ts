/**
 * Structure-aware chunking. Markdown is read by `marked`'s lexer: a heading
 * starts a new section (its chunks carry the heading path, e.g.
 * `["Runbook", "Disk full"]`), code blocks and tables are never cut while they
 * fit, paragraphs and list items are packed up to the target size. Plain text
 * is split on blank lines. A block longer than the target is cut on line, then
 * sentence, then word boundaries. Each chunk after the first of a section
 * starts with the last `overlap` characters of the one before (on a word
 * boundary), so a passage cut in two is still found whole in one of them.
 */
import { Lexer, type Token, type Tokens } from 'marked';

export interface ChunkingOptions {
  /** target chunk size, in characters. @default 1200 */
  readonly targetChars: number;
  /** characters repeated from the previous chunk of the same section. @default 150 */
  readonly overlapChars: number;
}

export const DEFAULT_CHUNKING: ChunkingOptions = { targetChars: 1200, overlapChars: 150 };

export interface Chunk {
  /** 0-based, in document order */
  readonly position: number;
  /** the Markdown headings above the chunk, outermost first */
  readonly heading_path: readonly string[];
  readonly text: string;
}

interface Block {
  readonly headingPath: readonly string[];
  readonly text: string;
  /** a code block or table: kept whole when it fits */
  readonly atomic: boolean;
}

/** Markdown blocks with their heading paths. */
function markdownBlocks(source: string): Block[] {
  const blocks: Block[] = [];
  const path: { depth: number; text: string }[] = [];
  const tokens: Token[] = new Lexer({ gfm: true }).lex(source);
  for (const token of tokens) {
    if (token.type === 'heading') {
      const heading = token as Tokens.Heading;
      while (path.length > 0 && (path[path.length - 1]?.depth ?? 0) >= heading.depth) path.pop();
      path.push({ depth: heading.depth, text: heading.text.trim() });
      continue;
    }
    if (token.type === 'space' || token.type === 'hr') continue;
    const text = token.raw.trim();
    if (text === '') continue;
    blocks.push({ headingPath: path.map((entry) => entry.text), text, atomic: token.type === 'code' || token.type === 'table' });
  }
  return blocks;
}

function plainBlocks(source: string): Block[] {
  return source
    .split(/\n\s*\n/)
    .map((text) => text.trim())
    .filter((text) => text !== '')
    .map((text) => ({ headingPath: [], text, atomic: false }));
}

/** Cuts a text longer than `size` at the best boundary before it: a line, a sentence, a word, else hard. */
function cutLong(text: string, size: number): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > size) {
    const window = rest.slice(0, size);
    const at = [window.lastIndexOf('\n'), window.search(/[.!?]\s[^.!?]*$/) + 1, window.lastIndexOf(' ')].find((index) => index > size / 3) ?? size;
    parts.push(rest.slice(0, at).trim());
    rest = rest.slice(at).trim();
  }
  if (rest !== '') parts.push(rest);
  return parts;
}

function tailOf(text: string, overlap: number): string {
  if (overlap <= 0 || text.length <= overlap) return overlap <= 0 ? '' : text;
  const tail = text.slice(text.length - overlap);
  const space = tail.indexOf(' ');
  return (space >= 0 && space < tail.length - 1 ? tail.slice(space + 1) : tail).trim();
}

/** The chunks of a document; `markdown` false treats it as plain text (HTML, PDF and JSON arrive as text). */
export function chunkDocument(source: string, markdown: boolean, options: ChunkingOptions = DEFAULT_CHUNKING): Chunk[] {
  const target = Math.max(100, options.targetChars);
  const overlap = Math.min(Math.max(0, options.overlapChars), Math.floor(target / 2));
  const blocks = markdown ? markdownBlocks(source) : plainBlocks(source);
  const chunks: Chunk[] = [];
  let current: string[] = [];
  let currentPath: readonly string[] = [];
  let carry = '';

  const flush = (): void => {
    if (current.length === 0) return;
    const body = current.join('\n\n');
    const text = carry === '' ? body : `${carry} ${body}`;
    chunks.push({ position: chunks.length, heading_path: currentPath, text });
    carry = tailOf(body, overlap);
    current = [];
  };
  const size = (): number => current.reduce((sum, text) => sum + text.length + 2, carry.length);

  for (const block of blocks) {
    if (block.headingPath.join('\u0000') !== currentPath.join('\u0000')) {
      flush();
      carry = '';
      currentPath = block.headingPath;
    }
    const pieces = block.text.length > target && !(block.atomic && block.text.length <= target * 2) ? cutLong(block.text, target) : [block.text];
    for (const piece of pieces) {
      if (current.length > 0 && size() + piece.length > target) flush();
      current.push(piece);
    }
  }
  flush();
  return chunks;
}
