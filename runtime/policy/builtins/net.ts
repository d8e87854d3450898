/** net.cidr_* built-ins (IPv4 and IPv6) and semver.*. */
import { isIP } from 'node:net';
import { builtinErr } from '../errors.js';
import { register, str } from './registry.js';

function ipBits(ip: string): bigint | null {
  const v = isIP(ip);
  if (v === 4) return ip.split('.').reduce((a, o) => (a << 8n) | BigInt(Number(o)), 0n);
  if (v !== 6) return null;
  let s = ip;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const n = ipBits(v4[1]!)!;
    s = s.replace(v4[1]!, `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`);
  }
  const [head, tail] = s.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((a, g) => (a << 16n) | BigInt(parseInt(g, 16)), 0n);
}

interface Net {
  readonly base: bigint;
  readonly bits: number;
  readonly width: number;
}
function parseNet(fn: string, s: string, allowIp: boolean): Net {
  const [ip, len] = s.split('/');
  const addr = ipBits(ip ?? '');
  if (addr === null) throw builtinErr(fn, `invalid CIDR address: ${s}`);
  const width = isIP(ip!) === 4 ? 32 : 128;
  if (len === undefined) {
    if (!allowIp) throw builtinErr(fn, `invalid CIDR address: ${s}`);
    return { base: addr, bits: width, width };
  }
  const bits = Number(len);
  if (!/^\d+$/.test(len) || bits > width) throw builtinErr(fn, `invalid CIDR address: ${s}`);
  const mask = ((1n << BigInt(bits)) - 1n) << BigInt(width - bits);
  return { base: addr & mask, bits, width };
}
const contains = (a: Net, b: Net): boolean => {
  if (a.width !== b.width || b.bits < a.bits) return false;
  const shift = BigInt(a.width - a.bits);
  return a.base >> shift === b.base >> shift;
};
register('net.cidr_contains', 2, (args) =>
  contains(parseNet('net.cidr_contains', str('net.cidr_contains', args, 0), false), parseNet('net.cidr_contains', str('net.cidr_contains', args, 1), true)),
);
register('net.cidr_intersects', 2, (args) => {
  const a = parseNet('net.cidr_intersects', str('net.cidr_intersects', args, 0), false);
  const b = parseNet('net.cidr_intersects', str('net.cidr_intersects', args, 1), false);
  return contains(a, b) || contains(b, a);
});
register('net.cidr_is_valid', 1, ([s]) => {
  try {
    return typeof s === 'string' && s.includes('/') && parseNet('x', s, false) !== null;
  } catch {
    return false;
  }
});

const SEMVER =
  /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
register('semver.is_valid', 1, ([v]) => typeof v === 'string' && SEMVER.test(v) && !v.startsWith('v'));
register('semver.compare', 2, (args) => {
  const parse = (i: number): RegExpExecArray => {
    const s = str('semver.compare', args, i);
    const m = SEMVER.exec(s);
    if (!m || s.startsWith('v')) throw builtinErr('semver.compare', `operand ${i + 1}: string ${JSON.stringify(s)} is not a valid SemVer`);
    return m;
  };
  const a = parse(0);
  const b = parse(1);
  for (let i = 1; i <= 3; i++) {
    const d = Number(a[i]) - Number(b[i]);
    if (d !== 0) return Math.sign(d);
  }
  const pa = a[4];
  const pb = b[4];
  if (pa === undefined || pb === undefined) return pa === pb ? 0 : pa === undefined ? 1 : -1;
  const xa = pa.split('.');
  const xb = pb.split('.');
  for (let i = 0; i < Math.max(xa.length, xb.length); i++) {
    const x = xa[i];
    const y = xb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny && Number(x) !== Number(y)) return Math.sign(Number(x) - Number(y));
    if (nx !== ny) return nx ? -1 : 1;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
});
