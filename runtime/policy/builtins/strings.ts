/** String built-ins and sprintf (Go verbs %v %s %d %q %f %x %t %%). */
import { builtinErr, typeErr } from '../errors.js';
import { RSet, formatNumber, formatValue, isNumber, typeName, type Value } from '../value.js';
import { arr, int, items, register, str } from './registry.js';

const s1 = (name: string, f: (s: string) => Value): void => register(name, 1, (args) => f(str(name, args, 0)));
const s2 = (name: string, f: (a: string, b: string) => Value): void => register(name, 2, (args) => f(str(name, args, 0), str(name, args, 1)));

register('concat', 2, (args) => {
  const sep = str('concat', args, 0);
  return items('concat', args, 1)
    .map((v) => {
      if (typeof v !== 'string') throw typeErr('concat', 2, 'array or set of strings', typeName(v));
      return v;
    })
    .sort((a, b) => (args[1] instanceof RSet ? (a < b ? -1 : a > b ? 1 : 0) : 0))
    .join(sep);
});
s2('contains', (a, b) => a.includes(b));
s2('startswith', (a, b) => a.startsWith(b));
s2('endswith', (a, b) => a.endsWith(b));
s2('indexof', (a, b) => {
  const i = a.indexOf(b);
  return i < 0 ? -1 : [...a.slice(0, i)].length;
});
s2('indexof_n', (a, b) => {
  const out: Value[] = [];
  if (b === '') return out;
  for (let i = a.indexOf(b); i >= 0; i = a.indexOf(b, i + 1)) out.push([...a.slice(0, i)].length);
  return out;
});
s1('lower', (s) => s.toLowerCase());
s1('upper', (s) => s.toUpperCase());
s1('trim_space', (s) => s.trim());
s1('strings.reverse', (s) => [...s].reverse().join(''));
s2('split', (a, b) => (b === '' ? [...a] : a.split(b)));
s2('strings.count', (a, b) => (b === '' ? [...a].length + 1 : a.split(b).length - 1));
register('replace', 3, (args) =>
  str('replace', args, 0)
    .split(str('replace', args, 1))
    .join(str('replace', args, 2)),
);
register('strings.replace_n', 2, (args) => {
  const pairs = args[0];
  let s = str('strings.replace_n', args, 1);
  if (!(pairs && typeof pairs === 'object' && !Array.isArray(pairs) && !(pairs instanceof RSet)))
    throw typeErr('strings.replace_n', 1, 'object', typeName(pairs!));
  for (const [k, v] of pairs.sortedEntries()) {
    if (typeof k !== 'string' || typeof v !== 'string') throw typeErr('strings.replace_n', 1, 'object[string: string]', 'object');
    s = s.split(k).join(v);
  }
  return s;
});
register('substring', 3, (args) => {
  const s = [...str('substring', args, 0)];
  const start = int('substring', args, 1);
  const len = int('substring', args, 2);
  if (start < 0) throw builtinErr('substring', 'negative offset');
  if (start >= s.length) return '';
  return (len < 0 ? s.slice(start) : s.slice(start, start + len)).join('');
});
const cut = (s: string, set: string, left: boolean, right: boolean): string => {
  const chars = new Set([...set]);
  const a = [...s];
  let i = 0;
  let j = a.length;
  while (left && i < j && chars.has(a[i]!)) i++;
  while (right && j > i && chars.has(a[j - 1]!)) j--;
  return a.slice(i, j).join('');
};
s2('trim', (a, b) => cut(a, b, true, true));
s2('trim_left', (a, b) => cut(a, b, true, false));
s2('trim_right', (a, b) => cut(a, b, false, true));
s2('trim_prefix', (a, b) => (a.startsWith(b) ? a.slice(b.length) : a));
s2('trim_suffix', (a, b) => (b !== '' && a.endsWith(b) ? a.slice(0, a.length - b.length) : a));
register('strings.any_prefix_match', 2, (args) => anyMatch('strings.any_prefix_match', args, (s, p) => s.startsWith(p)));
register('strings.any_suffix_match', 2, (args) => anyMatch('strings.any_suffix_match', args, (s, p) => s.endsWith(p)));
function anyMatch(fn: string, args: Value[], f: (s: string, p: string) => boolean): boolean {
  const list = (i: number): string[] => (typeof args[i] === 'string' ? [args[i]] : items(fn, args, i).map((v) => (typeof v === 'string' ? v : '')));
  const ss = list(0);
  const ps = list(1);
  return ss.some((s) => ps.some((p) => f(s, p)));
}

/** `%v` of a value the way OPA prints it (strings bare) */
const plain = (v: Value): string => (typeof v === 'string' ? v : typeof v === 'number' ? formatNumber(v) : formatValue(v));

register('sprintf', 2, (args) => {
  const format = str('sprintf', args, 0);
  const vals = arr('sprintf', args, 1);
  let n = 0;
  return format.replace(/%([-+ #0]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])/g, (_m, flags: string, width: string | undefined, prec: string | undefined, verb: string) => {
    if (verb === '%') return '%';
    if (n >= vals.length) return `%!${verb}(MISSING)`;
    const v = vals[n++]!;
    let out: string;
    switch (verb) {
      case 'd':
        out = isNumber(v)
          ? typeof v === 'bigint'
            ? v.toString()
            : Number.isInteger(v)
              ? formatNumber(v)
              : `%!d(float64=${v})`
          : `%!d(${typeName(v)}=${plain(v)})`;
        break;
      case 'f':
      case 'F':
        out = isNumber(v) ? Number(v).toFixed(prec === undefined ? 6 : Number(prec)) : `%!f(${typeName(v)}=${plain(v)})`;
        break;
      case 'e':
        out = isNumber(v)
          ? Number(v)
              .toExponential(prec === undefined ? 6 : Number(prec))
              .replace(/e([+-])(\d)$/, 'e$10$2')
          : plain(v);
        break;
      case 'g':
        out = isNumber(v) ? String(Number(v)) : plain(v);
        break;
      case 'q':
        out = typeof v === 'string' ? JSON.stringify(v) : plain(v);
        break;
      case 'x':
      case 'X': {
        out = isNumber(v)
          ? (typeof v === 'bigint' ? v : BigInt(Math.trunc(v))).toString(16)
          : typeof v === 'string'
            ? Buffer.from(v).toString('hex')
            : plain(v);
        if (verb === 'X') out = out.toUpperCase();
        break;
      }
      case 'o':
        out = isNumber(v) ? (typeof v === 'bigint' ? v : BigInt(Math.trunc(v))).toString(8) : plain(v);
        break;
      case 'b':
        out = isNumber(v) ? (typeof v === 'bigint' ? v : BigInt(Math.trunc(v))).toString(2) : plain(v);
        break;
      case 't':
        out = typeof v === 'boolean' ? String(v) : `%!t(${typeName(v)}=${plain(v)})`;
        break;
      default:
        out = plain(v);
    }
    if (flags.includes('+') && isNumber(v) && Number(v) >= 0 && 'dfeg'.includes(verb)) out = '+' + out;
    if (width !== undefined && out.length < Number(width)) {
      const pad = Number(width) - out.length;
      out = flags.includes('-') ? out + ' '.repeat(pad) : flags.includes('0') && isNumber(v) ? '0'.repeat(pad) + out : ' '.repeat(pad) + out;
    }
    return out;
  });
});
