/**
 * Handlebars' parser with the spec's indexed paths: `commits[0].id`,
 * `a[0].b[1]`, `this[0]` (besides Handlebars' own `commits.[0].id`).
 *
 * Handlebars reads `[0]` as a literal path segment but only after a
 * separator; glued to a name (`commits[0]`) its lexer refuses the name. This
 * parser is a second instance of Handlebars' own (Jison) parser whose lexer
 * (a) ends a name before `[` too and (b) emits a path separator between a
 * name and a literal segment glued to it, so `commits[0]` becomes the token
 * stream of `commits.[0]`: the grammar, the AST and the compiler stay
 * Handlebars'. A glued index must be a non-negative integer (`commits[x]`
 * is refused; `commits.[x]` remains the way to write an odd key).
 */
import type Handlebars from 'handlebars';

/** The parts of Handlebars' generated Jison parser and lexer used here (not in its typings). */
interface JisonLexer {
  rules: RegExp[];
  yytext: string;
  yyleng: number;
  yylineno: number;
  yylloc: unknown;
  /** the input consumed so far, and the last match */
  matched: string;
  match: string;
  lex: (this: JisonLexer) => number | string;
  setInput: (this: JisonLexer, input: string) => unknown;
}
interface JisonParser {
  readonly symbols_: Record<string, number>;
  readonly lexer: JisonLexer;
  yy: unknown;
  readonly Parser: new () => { lexer: JisonLexer; yy: unknown; parse(input: string): hbs.AST.Program };
}

/** index of the name rule in Handlebars 4.x's lexer (`ID` ahead of `=~}` whitespace `/.)|`) */
const NAME_RULE = 41;
const NAME_RULE_SOURCE = String.raw`^(?:([^\s!"#%-,\.\/;->@\[-\^` + '`' + String.raw`\{-~]+(?=([=~}\s\/.)|]))))`;
/** the same rule, also ending before `[` */
const INDEXED_NAME_RULE = new RegExp(String.raw`^(?:([^\s!"#%-,\.\/;->@\[-\^` + '`' + String.raw`\{-~]+(?=([=~}\s\/.)|\[]))))`);

class IndexError extends Error {}

type Queued = { readonly token: number | string; readonly yytext: string; readonly yyleng: number; readonly yylineno: number; readonly yylloc: unknown };

/** A parse function for `env` that accepts `<name>[<index>]`; returns the raw AST (compile and parse take it). */
export function indexedPathParser(env: typeof Handlebars): (source: string) => hbs.AST.Program {
  const base = (env as unknown as { readonly Parser: JisonParser }).Parser;
  if (base.lexer.rules[NAME_RULE]?.source !== NAME_RULE_SOURCE) {
    // a Handlebars upgrade moved the rule: fail at start, not with odd parses
    throw new Error('handlebars lexer layout changed: domains/tasks/template-parser.ts needs updating');
  }
  const ID = base.symbols_['ID'];
  const SEP = base.symbols_['SEP'];
  const baseLex = base.lexer.lex;
  const baseSetInput = base.lexer.setInput;
  let queued: Queued | null = null;
  let previousEnd = -1;
  let previousWasName = false;

  const lexer = Object.create(base.lexer) as JisonLexer;
  lexer.rules = base.lexer.rules.slice();
  lexer.rules[NAME_RULE] = INDEXED_NAME_RULE;
  lexer.setInput = function (this: JisonLexer, input: string) {
    queued = null;
    previousEnd = -1;
    previousWasName = false;
    return baseSetInput.call(this, input);
  };
  lexer.lex = function (this: JisonLexer) {
    if (queued !== null) {
      const { token, ...state } = queued;
      queued = null;
      Object.assign(this, state);
      return token;
    }
    const token = baseLex.call(this);
    const start = this.matched.length - this.match.length;
    const glued = token === ID && previousWasName && start === previousEnd && this.match.startsWith('[');
    previousEnd = this.matched.length;
    previousWasName = token === ID;
    if (!glued) return token;
    const index = this.yytext.slice(1, -1);
    if (!/^\d{1,9}$/.test(index)) {
      throw new IndexError(`"${this.yytext}" on line ${this.yylineno + 1}: an index is a non-negative integer, as in commits[0] (write .[${index}] for a key)`);
    }
    // the literal segment comes next; a separator first, as if `.[0]` had been written
    queued = { token, yytext: this.yytext, yyleng: this.yyleng, yylineno: this.yylineno, yylloc: this.yylloc };
    this.yytext = '.';
    return SEP as number;
  };

  const parser = new base.Parser();
  parser.lexer = lexer;
  // Handlebars fills the shared `yy` (AST helpers, locations) on its first parse
  env.parseWithoutProcessing('');
  parser.yy = base.yy;
  return (source) => parser.parse(source);
}
