/** Expression and term parsing (the rule-level parser in parser.ts builds on this). */
import type { Body, Expr, ExprBody, Term, With } from './ast.js';
import { RegoError, type Location } from './errors.js';
import type { Token } from './lexer.js';
import { RSet } from './value.js';

const KEYWORDS = new Set(['not', 'with', 'as', 'some', 'every', 'in', 'contains', 'if', 'else', 'default', 'import', 'package', 'true', 'false', 'null']);
const RELATION: Record<string, string> = { '==': 'equal', '!=': 'neq', '<': 'lt', '<=': 'lte', '>': 'gt', '>=': 'gte' };
const ARITH: Record<string, string> = { '+': 'plus', '-': 'minus' };
const FACTOR: Record<string, string> = { '*': 'mul', '/': 'div', '%': 'rem' };

export class TermParser {
  protected pos = 0;
  /** bracket depth: newlines end expressions only at depth 0 */
  protected depth = 0;
  private gen = 0;
  constructor(
    protected readonly toks: Token[],
    protected readonly file?: string,
  ) {}

  protected get tok(): Token {
    return this.toks[this.pos]!;
  }
  protected peek(n = 1): Token {
    return this.toks[Math.min(this.pos + n, this.toks.length - 1)]!;
  }
  protected loc(t: Token = this.tok): Location {
    return { line: t.line, column: t.column, ...(this.file ? { file: this.file } : {}) };
  }
  protected fail(msg: string, t: Token = this.tok): never {
    throw new RegoError('rego_parse_error', msg, this.loc(t));
  }
  protected is(text: string, kind?: Token['kind']): boolean {
    const t = this.tok;
    return t.text === text && (kind ? t.kind === kind : t.kind === 'op' || t.kind === 'ident');
  }
  protected accept(text: string): boolean {
    if (this.is(text)) {
      this.pos++;
      return true;
    }
    return false;
  }
  protected expect(text: string): Token {
    if (!this.is(text)) this.fail(`expected ${text} but found ${this.tok.kind === 'eof' ? 'end of input' : JSON.stringify(this.tok.text)}`);
    return this.toks[this.pos++]!;
  }
  /** a continuation token on a new line at depth 0 starts a new expression */
  protected cont(): boolean {
    return this.depth > 0 || !this.tok.nl;
  }
  protected wildcard(): Term {
    return { t: 'var', name: `$_${this.gen++}` };
  }

  /** `{ expr; expr \n expr }` */
  parseBraceBody(): Body {
    this.expect('{');
    const saved = this.depth;
    this.depth = 0;
    const body = this.parseExprs('}');
    this.depth = saved;
    this.expect('}');
    return body;
  }

  parseExprs(end: string): Body {
    const body: Body = [];
    while (!this.is(end) && this.tok.kind !== 'eof') {
      body.push(this.parseExpr());
      if (this.accept(';')) continue;
      const t: Token = this.toks[this.pos]!;
      if (!this.is(end) && !t.nl && t.kind !== 'eof') this.fail(`unexpected ${JSON.stringify(this.tok.text)}`);
    }
    if (body.length === 0 && end === '}') this.fail('found empty body');
    return body;
  }

  parseExpr(): Expr {
    const start = this.tok;
    const neg = this.tok.kind === 'ident' && this.tok.text === 'not' && this.accept('not');
    const e = this.parseExprBody();
    const withs: With[] = [];
    while (this.tok.kind === 'ident' && this.tok.text === 'with') {
      this.pos++;
      const target = this.parseTerm();
      this.expect('as');
      withs.push({ target, value: this.parseInfix() });
    }
    return { e, neg, with: withs, loc: this.loc(start) };
  }

  private parseExprBody(): ExprBody {
    if (this.tok.kind === 'ident' && this.tok.text === 'some') {
      this.pos++;
      const first = this.parseRelation();
      if (this.is('in')) {
        this.pos++;
        return { k: 'somein', key: null, value: first, coll: this.parseRelation() };
      }
      if (this.is(',') && !this.isSomeDecl()) {
        this.pos++;
        const value = this.parseRelation();
        this.expect('in');
        return { k: 'somein', key: first, value, coll: this.parseRelation() };
      }
      const vars = [first];
      while (this.accept(',')) vars.push(this.parseTerm());
      return { k: 'some', vars: vars.map((v) => (v.t === 'var' ? v.name : this.fail('expected var in some declaration'))) };
    }
    if (this.tok.kind === 'ident' && this.tok.text === 'every') {
      this.pos++;
      let key: Term | null = null;
      let value = this.parseTerm();
      if (this.accept(',')) {
        key = value;
        value = this.parseTerm();
      }
      this.expect('in');
      const coll = this.parseRelation();
      return { k: 'every', key, value, coll, body: this.parseBraceBody() };
    }
    const a = this.parseInfix();
    if (this.cont() && (this.is(':=') || this.is('='))) {
      const op = this.toks[this.pos++]!.text;
      const b = this.parseInfix();
      return op === ':=' ? { k: 'assign', a, b } : { k: 'unify', a, b };
    }
    return { k: 'term', term: a };
  }

  /** `some a, b` declares vars unless an `in` follows the list */
  private isSomeDecl(): boolean {
    let i = this.pos;
    let depth = 0;
    for (; i < this.toks.length; i++) {
      const t = this.toks[i]!;
      if (t.kind === 'eof') return true;
      if (depth === 0 && i > this.pos && t.nl) return true;
      if (t.kind === 'op' && '([{'.includes(t.text)) depth++;
      if (t.kind === 'op' && ')]}'.includes(t.text)) depth--;
      if (depth < 0 || (depth === 0 && t.text === ';')) return true;
      if (depth === 0 && t.kind === 'ident' && t.text === 'in') return false;
    }
    return true;
  }

  /** infix term including membership: `x in xs`, `k, v in xs` (inside calls only the first form) */
  parseInfix(): Term {
    let lhs = this.parseRelation();
    while (this.tok.kind === 'ident' && this.tok.text === 'in' && this.cont()) {
      const at = this.loc();
      this.pos++;
      lhs = { t: 'call', fn: 'internal.member_2', args: [lhs, this.parseRelation()], loc: at };
    }
    return lhs;
  }

  private binary(next: () => Term, ops: Record<string, string>): Term {
    let lhs = next();
    while (this.tok.kind === 'op' && ops[this.tok.text] && this.cont()) {
      const at = this.loc();
      const fn = ops[this.toks[this.pos++]!.text]!;
      lhs = { t: 'call', fn, args: [lhs, next()], loc: at };
    }
    return lhs;
  }
  parseRelation(): Term {
    return this.binary(() => this.parseOr(), RELATION);
  }
  private parseOr(): Term {
    return this.binary(() => this.parseAnd(), { '|': 'or' });
  }
  private parseAnd(): Term {
    return this.binary(() => this.parseArith(), { '&': 'and' });
  }
  private parseArith(): Term {
    return this.binary(() => this.parseFactor(), ARITH);
  }
  private parseFactor(): Term {
    return this.binary(() => this.parseTerm(), FACTOR);
  }

  parseTerm(): Term {
    const t = this.tok;
    const loc = this.loc();
    let term: Term;
    if (t.kind === 'number') {
      this.pos++;
      term = { t: 'val', v: parseNumber(t.text), loc };
    } else if (t.kind === 'string') {
      this.pos++;
      term = { t: 'val', v: t.value!, loc };
    } else if (t.kind === 'op' && t.text === '-' && (this.peek().kind === 'number' || this.peek().text === '(' || this.peek().kind === 'ident')) {
      this.pos++;
      const inner = this.parseTerm();
      if (inner.t === 'val' && typeof inner.v === 'number') return { t: 'val', v: -inner.v, loc };
      if (inner.t === 'val' && typeof inner.v === 'bigint') return { t: 'val', v: -inner.v, loc };
      return { t: 'call', fn: 'minus', args: [{ t: 'val', v: 0 }, inner], loc };
    } else if (t.kind === 'ident') {
      if (t.text === 'true' || t.text === 'false') {
        this.pos++;
        term = { t: 'val', v: t.text === 'true', loc };
      } else if (t.text === 'null') {
        this.pos++;
        term = { t: 'val', v: null, loc };
      } else {
        if (KEYWORDS.has(t.text) && this.peek().text !== '(') this.fail(`unexpected ${t.text} keyword`);
        this.pos++;
        term = t.text === '_' ? this.wildcard() : { t: 'var', name: t.text, loc };
        // dotted call names: a.b.c(...)
        let name = t.text;
        let j = this.pos;
        while (this.toks[j]!.text === '.' && this.toks[j + 1]!.kind === 'ident' && !this.toks[j]!.nl) {
          name += '.' + this.toks[j + 1]!.text;
          j += 2;
        }
        if (this.toks[j]!.text === '(' && this.toks[j]!.kind === 'op' && !this.toks[j]!.nl) {
          this.pos = j + 1;
          term = this.parseCallArgs(name, loc);
        }
      }
    } else if (this.accept('(')) {
      this.depth++;
      term = this.parseInfix();
      if (this.accept(',')) {
        // `(k, v in xs)`: membership with key
        const value = this.parseRelation();
        this.expect('in');
        term = { t: 'call', fn: 'internal.member_3', args: [term, value, this.parseRelation()], loc };
      }
      this.depth--;
      this.expect(')');
    } else if (t.text === '[') term = this.parseArray(loc);
    else if (t.text === '{') term = this.parseBraces(loc);
    else this.fail(t.kind === 'eof' ? 'unexpected end of input' : `unexpected ${JSON.stringify(t.text)}`);
    return this.parseRefTail(term);
  }

  private parseCallArgs(fn: string, loc: Location): Term {
    this.depth++;
    const args: Term[] = [];
    while (!this.is(')')) {
      args.push(this.parseInfix());
      if (!this.accept(',')) break;
    }
    this.depth--;
    this.expect(')');
    if (fn === 'set' && args.length === 0) return { t: 'val', v: new RSet(), loc };
    return { t: 'call', fn, args, loc };
  }

  private parseRefTail(head: Term): Term {
    const path: Term[] = [];
    for (;;) {
      if (this.is('.') && !this.tok.nl && this.peek().kind === 'ident') {
        this.pos++;
        path.push({ t: 'val', v: this.toks[this.pos++]!.text });
      } else if (this.is('[') && !this.tok.nl) {
        this.pos++;
        this.depth++;
        path.push(this.parseInfix());
        this.depth--;
        this.expect(']');
      } else break;
    }
    if (path.length === 0) return head;
    if (head.t === 'ref') return { t: 'ref', head: head.head, path: [...head.path, ...path], ...(head.loc ? { loc: head.loc } : {}) };
    return { t: 'ref', head, path, ...(head.loc ? { loc: head.loc } : {}) };
  }

  private parseArray(loc: Location): Term {
    this.expect('[');
    this.depth++;
    const items: Term[] = [];
    if (!this.is(']')) {
      const first = this.parseRelationNoOr();
      if (this.accept('|')) {
        const body = this.parseCompBody(']');
        return { t: 'acomp', head: first, body, loc };
      }
      items.push(first);
      while (this.accept(',') && !this.is(']')) items.push(this.parseInfix());
    }
    this.depth--;
    this.expect(']');
    return { t: 'array', items, loc };
  }

  private parseCompBody(end: string): Body {
    const saved = this.depth;
    this.depth = 0;
    const body = this.parseExprs(end);
    this.depth = saved - 1;
    this.expect(end);
    return body;
  }

  private parseBraces(loc: Location): Term {
    this.expect('{');
    this.depth++;
    if (this.accept('}')) {
      this.depth--;
      return { t: 'object', items: [], loc };
    }
    const first = this.parseRelationNoOr();
    if (this.accept(':')) {
      const value = this.parseRelationNoOr();
      if (this.accept('|')) return { t: 'ocomp', key: first, value, body: this.parseCompBody('}'), loc };
      const items: [Term, Term][] = [[first, value]];
      while (this.accept(',') && !this.is('}')) {
        const k = this.parseInfix();
        this.expect(':');
        items.push([k, this.parseInfix()]);
      }
      this.depth--;
      this.expect('}');
      return { t: 'object', items, loc };
    }
    if (this.accept('|')) return { t: 'scomp', head: first, body: this.parseCompBody('}'), loc };
    const items = [first];
    while (this.accept(',') && !this.is('}')) items.push(this.parseInfix());
    this.depth--;
    this.expect('}');
    return { t: 'set', items, loc };
  }

  /** comprehension heads: `|` separates the head from the body, so it is not set union here */
  private parseRelationNoOr(): Term {
    return this.binary(() => this.parseAnd(), RELATION);
  }
}

function parseNumber(text: string): number | bigint {
  if (/^-?[0-9]+$/.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }
  return Number(text);
}
