/** regex.* with RE2 semantics (re2js), and glob.match. */
import { RE2JS } from 're2js';
import { builtinErr } from '../errors.js';
import { formatValue, type Value } from '../value.js';
import { arr, int, register, str } from './registry.js';

const cache = new Map<string, RE2JS>();
function compile(fn: string, pattern: string): RE2JS {
  let re = cache.get(pattern);
  if (!re) {
    try {
      re = RE2JS.compile(pattern);
    } catch (err) {
      throw builtinErr(fn, `error parsing regexp: ${(err as Error).message}`);
    }
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, re);
  }
  return re;
}

register('regex.match', 2, (args) => compile('regex.match', str('regex.match', args, 0)).test(str('regex.match', args, 1)));
register('re_match', 2, (args) => compile('re_match', str('re_match', args, 0)).test(str('re_match', args, 1)));
register('regex.is_valid', 1, ([p]) => {
  if (typeof p !== 'string') return false;
  try {
    RE2JS.compile(p);
    return true;
  } catch {
    return false;
  }
});
register('regex.split', 2, (args) => compile('regex.split', str('regex.split', args, 0)).split(str('regex.split', args, 1), -1));
register('regex.replace', 3, (args) => {
  const re = compile('regex.replace', str('regex.replace', args, 1));
  return re.matcher(str('regex.replace', args, 0)).replaceAll(str('regex.replace', args, 2).replace(/\$\{?(\d+)\}?/g, '$$$1'));
});
function findAll(re: RE2JS, s: string, n: number): RegExpMatchArray[] {
  const out: RegExpMatchArray[] = [];
  for (const m of re.matchAll(s)) {
    if (n >= 0 && out.length >= n) break;
    out.push(m);
  }
  return out;
}
register('regex.find_n', 3, (args) => {
  const re = compile('regex.find_n', str('regex.find_n', args, 0));
  return findAll(re, str('regex.find_n', args, 1), int('regex.find_n', args, 2)).map((m) => m[0]);
});
register('regex.find_all_string_submatch_n', 3, (args) => {
  const fn = 'regex.find_all_string_submatch_n';
  const re = compile(fn, str(fn, args, 0));
  return findAll(re, str(fn, args, 1), int(fn, args, 2)).map((m) => [...m].map((g) => g ?? ''));
});

/** glob.match: `*` stays within delimiters, `**` crosses them, `?`, `[...]`, `{a,b}` */
const globCache = new Map<string, RegExp>();
function globToRegExp(pattern: string, delims: string[]): RegExp {
  const key = JSON.stringify([pattern, delims]);
  const hit = globCache.get(key);
  if (hit) return hit;
  const esc = (c: string): string => c.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
  const notDelim = delims.length ? `[^${delims.map(esc).join('')}]` : '[\\s\\S]';
  let out = '';
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) out += esc(pattern[++i]!);
    else if (c === '*') {
      if (pattern[i + 1] === '*') {
        out += '[\\s\\S]*';
        i++;
      } else out += notDelim + '*';
    } else if (c === '?') out += notDelim;
    else if (c === '[') {
      const j = pattern.indexOf(']', i + 1);
      if (j < 0) throw builtinErr('glob.match', 'unexpected end of input');
      let cls = pattern.slice(i + 1, j);
      if (cls.startsWith('!')) cls = '^' + cls.slice(1);
      out += '[' + cls.replace(/\\/g, '\\\\') + ']';
      i = j;
    } else if (c === '{') {
      depth++;
      out += '(?:';
    } else if (c === '}' && depth > 0) {
      depth--;
      out += ')';
    } else if (c === ',' && depth > 0) out += '|';
    else out += esc(c);
  }
  const re = new RegExp('^' + out + '$', 'u');
  if (globCache.size > 1000) globCache.clear();
  globCache.set(key, re);
  return re;
}
register('glob.match', 3, (args) => {
  const pattern = str('glob.match', args, 0);
  // OPA: an empty list means the default ["."]; null means no delimiters at all
  const listed = args[1] === null ? [] : arr('glob.match', args, 1).map((v: Value) => (typeof v === 'string' ? v : formatValue(v)));
  const delims = args[1] !== null && listed.length === 0 ? ['.'] : listed;
  return globToRegExp(pattern, delims).test(str('glob.match', args, 2));
});
register('glob.quote_meta', 1, (args) => str('glob.quote_meta', args, 0).replace(/[*?\\[\]{}]/g, '\\$&'));
