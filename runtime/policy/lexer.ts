/** Rego lexer: tokens with 1-based line/column; `nl` marks a newline before the token (a body separator). */
import { RegoError } from './errors.js';

type TokKind = 'ident' | 'string' | 'number' | 'op' | 'eof';
export interface Token {
  readonly kind: TokKind;
  readonly text: string;
  /** decoded value of string tokens */
  readonly value?: string;
  readonly line: number;
  readonly column: number;
  readonly nl: boolean;
}

const OPS3 = new Set<string>();
const OPS2 = new Set([':=', '==', '!=', '<=', '>=']);
const OPS1 = new Set('[]{}(),;.:=<>+-*/%&|'.split(''));

export function lex(src: string, file?: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  let line = 1;
  let col = 1;
  let nl = true;
  const err = (msg: string): never => {
    throw new RegoError('rego_parse_error', msg, { line, column: col, ...(file ? { file } : {}) });
  };
  const adv = (n: number): void => {
    for (let k = 0; k < n; k++) {
      if (src[i] === '\n') {
        line++;
        col = 1;
      } else col++;
      i++;
    }
  };
  while (i < src.length) {
    const c = src[i]!;
    if (c === '\n') {
      nl = true;
      adv(1);
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      adv(1);
      continue;
    }
    if (c === '#') {
      while (i < src.length && src[i] !== '\n') adv(1);
      continue;
    }
    const start = { line, column: col, nl };
    nl = false;
    if (/[A-Za-z_]/.test(c)) {
      let j = i;
      while (j < src.length && /[A-Za-z0-9_]/.test(src[j]!)) j++;
      const text = src.slice(i, j);
      out.push({ kind: 'ident', text, ...start });
      adv(j - i);
      continue;
    }
    if (/[0-9]/.test(c)) {
      const m = /^(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/.exec(src.slice(i, i + 400));
      if (!m) err('invalid number');
      out.push({ kind: 'number', text: m![0], ...start });
      adv(m![0].length);
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== '"') {
        if (src[j] === '\\') j++;
        if (src[j] === '\n') err('non-terminated string');
        j++;
      }
      if (j >= src.length) err('non-terminated string');
      const text = src.slice(i, j + 1);
      let value: string;
      try {
        value = JSON.parse(text) as string;
      } catch {
        return err('invalid string escape');
      }
      out.push({ kind: 'string', text, value, ...start });
      adv(j + 1 - i);
      continue;
    }
    if (c === '`') {
      const j = src.indexOf('`', i + 1);
      if (j < 0) err('non-terminated raw string');
      out.push({ kind: 'string', text: src.slice(i, j + 1), value: src.slice(i + 1, j), ...start });
      adv(j + 1 - i);
      continue;
    }
    const two = src.slice(i, i + 2);
    if (OPS3.has(src.slice(i, i + 3))) {
      out.push({ kind: 'op', text: src.slice(i, i + 3), ...start });
      adv(3);
    } else if (OPS2.has(two)) {
      out.push({ kind: 'op', text: two, ...start });
      adv(2);
    } else if (OPS1.has(c)) {
      out.push({ kind: 'op', text: c, ...start });
      adv(1);
    } else err(`unexpected character ${JSON.stringify(c)}`);
  }
  out.push({ kind: 'eof', text: '', line, column: col, nl: true });
  return out;
}
