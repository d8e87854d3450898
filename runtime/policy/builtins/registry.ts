/** Built-in function registry: name -> arity and implementation. */
import { BuiltinError, RegoError, typeErr } from '../errors.js';
import { RObject, RSet, isNumber, typeName, type Value } from '../value.js';

export interface BuiltinCtx {
  readonly nowNs: bigint;
}
export type BuiltinFn = (args: Value[], ctx: BuiltinCtx) => Value | undefined;

const registry = new Map<string, { arity: number; fn: BuiltinFn }>();

export function register(name: string, arity: number, fn: BuiltinFn): void {
  registry.set(name, { arity, fn });
}

/** built-ins OPA has that this engine does not: calls fail (unless mocked with `with`) */
export class UnsupportedBuiltin extends RegoError {}
export function unsupported(name: string, arity: number): void {
  register(name, arity, () => {
    throw new UnsupportedBuiltin('eval_builtin_error', `${name}: built-in not supported by this engine`);
  });
}

export const isBuiltin = (name: string): boolean => registry.has(name);
export const builtinArity = (name: string): number | undefined => registry.get(name)?.arity;

export function callBuiltin(name: string, args: Value[], ctx: BuiltinCtx): Value | undefined {
  const b = registry.get(name);
  if (!b) throw new RegoError('rego_type_error', `undefined function ${name}`);
  if (b.arity >= 0 && args.length !== b.arity) throw new RegoError('rego_type_error', `${name}: arity mismatch`);
  return b.fn(args, ctx);
}

// argument checks with OPA's messages
export function num(fn: string, args: Value[], i: number): number | bigint {
  const v = args[i]!;
  if (!isNumber(v)) throw typeErr(fn, i + 1, 'number', typeName(v));
  return v;
}
export function str(fn: string, args: Value[], i: number): string {
  const v = args[i]!;
  if (typeof v !== 'string') throw typeErr(fn, i + 1, 'string', typeName(v));
  return v;
}
export function arr(fn: string, args: Value[], i: number): Value[] {
  const v = args[i]!;
  if (!Array.isArray(v)) throw typeErr(fn, i + 1, 'array', typeName(v));
  return v;
}
export function set(fn: string, args: Value[], i: number): RSet {
  const v = args[i]!;
  if (!(v instanceof RSet)) throw typeErr(fn, i + 1, 'set', typeName(v));
  return v;
}
export function obj(fn: string, args: Value[], i: number): RObject {
  const v = args[i]!;
  if (!(v instanceof RObject)) throw typeErr(fn, i + 1, 'object', typeName(v));
  return v;
}
export function oneOf(fn: string, args: Value[], i: number, types: string[]): Value {
  const v = args[i]!;
  if (!types.includes(typeName(v))) throw typeErr(fn, i + 1, `one of {${types.join(', ')}}`, typeName(v));
  return v;
}
/** integer argument as a JS number */
export function int(fn: string, args: Value[], i: number): number {
  const v = num(fn, args, i);
  const n = Number(v);
  if (!Number.isInteger(n)) throw new BuiltinError('eval_type_error', `${fn}: operand ${i + 1} must be integer number but got floating-point number`);
  return n;
}
/** elements of an array or set */
export function items(fn: string, args: Value[], i: number): Value[] {
  const v = args[i]!;
  if (Array.isArray(v)) return v;
  if (v instanceof RSet) return [...v.values()];
  throw typeErr(fn, i + 1, 'one of {array, set}', typeName(v));
}
