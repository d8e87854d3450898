/** Rego v1 module and query parser (v0 rule bodies without `if` are accepted too). */
import { TRUE, type Body, type Import, type Module, type Rule, type Term } from './ast.js';
import { RegoError } from './errors.js';
import { lex } from './lexer.js';
import { TermParser } from './parse-terms.js';

export type RegoVersion = 0 | 1;

class ModuleParser extends TermParser {
  /** v0: `p[x] { … }` (no value) is a partial set; `import rego.v1` switches a module to v1 */
  v0 = false;

  parseModule(): Module {
    this.expect('package');
    const pkgTerm = this.parseTerm();
    const pkg = refToStrings(pkgTerm) ?? this.fail('package must be a reference of names');
    const imports: Import[] = [];
    const rules: Rule[] = [];
    while (this.tok.kind !== 'eof') {
      if (this.is('import')) {
        const at = this.tok;
        this.pos++;
        const path = this.parseTerm();
        const names = refToStrings(path);
        if (!names || !['data', 'input', 'future', 'rego'].includes(names[0]!)) this.fail('invalid import path', at);
        let alias = names[names.length - 1]!;
        if (this.accept('as')) alias = this.expectIdent();
        if (names.join('.') === 'rego.v1') this.v0 = false;
        if (names[0] === 'data' || names[0] === 'input') imports.push({ path, alias });
        continue;
      }
      rules.push(...this.parseRule());
    }
    return { pkg, imports, rules, ...(this.file ? { file: this.file } : {}) };
  }

  private expectIdent(): string {
    if (this.tok.kind !== 'ident') this.fail('expected identifier');
    return this.toks[this.pos++]!.text;
  }

  private parseRule(): Rule[] {
    const start = this.tok;
    const loc = this.loc();
    const isDefault = this.accept('default');
    const headTerm = this.parseTerm();
    let ref: Term[];
    let args: Term[] | null = null;
    if (headTerm.t === 'call') {
      ref = headTerm.fn.split('.').map((s) => ({ t: 'val', v: s }));
      args = headTerm.args;
    } else if (headTerm.t === 'var') ref = [{ t: 'val', v: headTerm.name }];
    else if (headTerm.t === 'ref' && headTerm.head.t === 'var') ref = [{ t: 'val', v: headTerm.head.name }, ...headTerm.path];
    else return this.fail('invalid rule head', start);
    let key: Term | null = null;
    let value: Term | null = null;
    let kind: Rule['kind'] = args ? 'func' : 'complete';
    if (this.tok.kind === 'ident' && this.tok.text === 'contains' && !this.tok.nl) {
      this.pos++;
      key = this.parseInfix();
      kind = 'set';
    } else if ((this.is(':=') || this.is('=')) && !this.tok.nl) {
      this.pos++;
      value = this.parseInfix();
    }
    if (isDefault) {
      if (!value) return this.fail('default rules must have a value', start);
      return [{ kind, ref, key: null, value, args, body: [], elses: [], isDefault: true, loc }];
    }
    const last = ref[ref.length - 1]!;
    if (kind === 'complete' && ref.length > 1 && !(last.t === 'val' && typeof last.v === 'string')) {
      kind = this.v0 && value === null ? 'set' : 'object';
      key = last;
      ref = ref.slice(0, -1);
    }
    const bodies = this.parseRuleBodies();
    const elses: Rule['elses'][number][] = [];
    while (this.tok.kind === 'ident' && this.tok.text === 'else') {
      const eloc = this.loc();
      this.pos++;
      let evalue: Term = TRUE;
      if (this.accept(':=') || this.accept('=')) evalue = this.parseInfix();
      elses.push({ value: evalue, body: this.parseRuleBodies()[0] ?? [], loc: eloc });
    }
    const v = value ?? TRUE;
    return bodies.map((body) => ({ kind, ref, key, value: v, args, body, elses, isDefault: false, loc }));
  }

  /** `if { ... }`, `if expr`, `{ ... }` (v0), or nothing (the body is `true`) */
  private parseRuleBodies(): Body[] {
    if (this.accept('if')) {
      if (this.is('{')) {
        const save = this.pos;
        try {
          return [this.parseBraceBody()];
        } catch (err) {
          // `if {x: 1}[k]`-style literal bodies are rare; retry as a single expression
          this.pos = save;
          try {
            return [[this.parseExpr()]];
          } catch {
            throw err;
          }
        }
      }
      return [[this.parseExpr()]];
    }
    if (this.is('{') && !this.tok.nl) {
      const bodies: Body[] = [];
      while (this.is('{')) bodies.push(this.parseBraceBody());
      return bodies;
    }
    return [[{ e: { k: 'term', term: TRUE }, neg: false, with: [], loc: this.loc() }]];
  }

  parseQuery(): Body {
    const body = this.parseExprs('');
    if (this.tok.kind !== 'eof') this.fail(`unexpected ${JSON.stringify(this.tok.text)}`);
    return body;
  }
}

export function refToStrings(t: Term): string[] | null {
  if (t.t === 'var') return [t.name];
  if (t.t !== 'ref' || t.head.t !== 'var') return null;
  const out = [t.head.name];
  for (const p of t.path) {
    if (p.t !== 'val' || typeof p.v !== 'string') return null;
    out.push(p.v);
  }
  return out;
}

export function parseModule(src: string, file?: string, version: RegoVersion = 1): Module {
  const p = new ModuleParser(lex(src, file), file);
  p.v0 = version === 0;
  return p.parseModule();
}

export function parseQuery(src: string): Body {
  const body = new ModuleParser(lex(src)).parseQuery();
  if (body.length === 0) throw new RegoError('rego_parse_error', 'empty query', { line: 1, column: 1 });
  return body;
}

export function parseTermText(src: string): Term {
  const p = new ModuleParser(lex(src));
  return p.parseInfix();
}
