/** json.*, base64, base64url, hex and urlquery built-ins. */
import { builtinErr, typeErr } from '../errors.js';
import { RObject, RSet, formatValue, fromJSON, toJSON, typeName, type Value } from '../value.js';
import { obj, register, str } from './registry.js';

register('json.marshal', 1, ([v]) => JSON.stringify(toJSON(v!)));
register('json.unmarshal', 1, (args) => {
  try {
    return fromJSON(JSON.parse(str('json.unmarshal', args, 0)));
  } catch (err) {
    throw builtinErr('json.unmarshal', (err as Error).message);
  }
});
register('json.is_valid', 1, ([s]) => {
  if (typeof s !== 'string') return false;
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
});
const b64 = (s: string): boolean => /^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0;
register('base64.encode', 1, (args) => Buffer.from(str('base64.encode', args, 0)).toString('base64'));
register('base64.decode', 1, (args) => {
  const s = str('base64.decode', args, 0);
  if (!b64(s)) throw builtinErr('base64.decode', 'illegal base64 data');
  return Buffer.from(s, 'base64').toString('utf8');
});
register('base64.is_valid', 1, ([s]) => typeof s === 'string' && b64(s));
register('base64url.encode', 1, (args) =>
  Buffer.from(str('base64url.encode', args, 0))
    .toString('base64')
    .replace(/\+/g, '-')
    .replace(/\//g, '_'),
);
register('base64url.encode_no_pad', 1, (args) => Buffer.from(str('base64url.encode_no_pad', args, 0)).toString('base64url'));
register('base64url.decode', 1, (args) => {
  const s = str('base64url.decode', args, 0);
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(s)) throw builtinErr('base64url.decode', 'illegal base64 data');
  return Buffer.from(s, 'base64url').toString('utf8');
});
register('hex.encode', 1, (args) => Buffer.from(str('hex.encode', args, 0)).toString('hex'));
register('hex.decode', 1, (args) => {
  const s = str('hex.decode', args, 0);
  if (!/^([0-9a-fA-F]{2})*$/.test(s)) throw builtinErr('hex.decode', 'invalid byte');
  return Buffer.from(s, 'hex').toString('utf8');
});
const qenc = (s: string): string =>
  encodeURIComponent(s)
    .replace(/%20/g, '+')
    .replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
register('urlquery.encode', 1, (args) => qenc(str('urlquery.encode', args, 0)));
register('urlquery.decode', 1, (args) => {
  try {
    return decodeURIComponent(str('urlquery.decode', args, 0).replace(/\+/g, ' '));
  } catch {
    throw builtinErr('urlquery.decode', 'invalid URL escape');
  }
});
register('urlquery.encode_object', 1, (args) => {
  const o = obj('urlquery.encode_object', args, 0);
  const parts: string[] = [];
  for (const [k, v] of o.sortedEntries()) {
    if (typeof k !== 'string') throw typeErr('urlquery.encode_object', 1, 'object[string: any]', typeName(k));
    const vals = typeof v === 'string' ? [v] : Array.isArray(v) ? v : v instanceof RSet ? v.sorted() : null;
    if (!vals) throw typeErr('urlquery.encode_object', 1, 'object of strings, arrays or sets', typeName(v));
    for (const x of vals) parts.push(qenc(k) + '=' + qenc(typeof x === 'string' ? x : formatValue(x)));
  }
  return parts.join('&');
});
register('urlquery.decode_object', 1, (args) => {
  const out = new RObject();
  for (const [k, v] of new URLSearchParams(str('urlquery.decode_object', args, 0))) {
    const cur = out.get(k);
    out.set(k, [...(Array.isArray(cur) ? cur : []), v] as Value[]);
  }
  return out;
});
