/** The Rego engine through its public API: parse errors with positions, evaluation semantics, built-ins. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compile, RegoError, validate } from '../../runtime/policy/index.js';

const errorOf = (fn: () => unknown): RegoError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof RegoError) return err;
    throw err;
  }
  throw new Error('no error');
};

describe('parse and validate', () => {
  it('accepts a valid module', () => {
    expect(validate('package a\n\np if input.x == 1\n')).toEqual([]);
  });

  it('gives the line and column of a syntax error', () => {
    expect(validate('package a\n\np if {\n  input.x == \n}\n')).toEqual([{ line: 5, column: 1, message: 'unexpected "}"', code: 'rego_parse_error' }]);
    expect(validate('package a\np := "unterminated\n')[0]).toMatchObject({ line: 2, column: 6, code: 'rego_parse_error' });
    expect(validate('package a\np if { x := 1 ] }')[0]).toMatchObject({ line: 2, column: 15, code: 'rego_parse_error' });
  });

  // the first error of each module: where it is and what it says
  const firstErrors: [string, string, Record<string, unknown>][] = [
    ['a missing package', 'p := 1', { line: 1, column: 1, code: 'rego_parse_error', message: 'expected package but found "p"' }],
    ['an unknown function', 'package a\n\np if {\n  nope.fn(1)\n}\n', { line: 4, column: 3, code: 'rego_type_error', message: 'undefined function nope.fn' }],
    ['an unsafe var in an expression', 'package a\n\np if {\n  x > 1\n}\n', { line: 4, column: 3, code: 'rego_unsafe_var_error', message: 'var x is unsafe' }],
    ['an unsafe var in a rule head', 'package a\np := y if input.x\n', { line: 2, column: 1, code: 'rego_unsafe_var_error', message: 'var y is unsafe' }],
    ['an unsafe var under not', 'package a\np if { not input.xs[i] }\n', { code: 'rego_unsafe_var_error', message: 'var i is unsafe' }],
    [
      'a wrong arity',
      'package a\np if count(1, 2, 3)\n',
      { line: 2, column: 6, code: 'rego_type_error', message: 'count: arity mismatch: expected 1 arguments, got 3' },
    ],
    ['a var assigned twice', 'package a\np if {\n  x := 1\n  x := 2\n}\n', { line: 4, column: 3, code: 'rego_compile_error', message: 'var x assigned above' }],
  ];
  it.each(firstErrors)('rejects %s at compile time, with its position', (_what, source, expected) => {
    expect(validate(source)[0]).toMatchObject(expected);
  });

  it('orders body expressions so vars are bound before they are read', () => {
    const b = compile(['package a\np := y if {\n  y > 1\n  y := x + 1\n  x := input.n\n}\nq := [v | v > 1; some v in input.xs]']);
    expect(b.eval('data.a.p', { input: { n: 5, xs: [1, 2, 3] } })).toBe(6);
    expect(b.eval('data.a.p', { input: { n: 0 } })).toBeUndefined();
    expect(b.eval('data.a.q', { input: { xs: [1, 2, 3] } })).toEqual([2, 3]);
  });

  it('rejects recursive rules and functions', () => {
    expect(validate('package a\np if q\nq if p\n')[0]).toMatchObject({
      code: 'rego_recursion_error',
      message: 'rule data.a.p is recursive: data.a.p -> data.a.q -> data.a.p',
    });
    expect(validate('package a\nf(x) := y if y := f(x)\n')[0]).toMatchObject({ code: 'rego_recursion_error', line: 2, column: 1 });
    expect(validate('package a\np if data.a[_]\n')[0]).toMatchObject({ code: 'rego_recursion_error' });
    expect(validate('package a\np if data.b.q\n')).toEqual([]);
  });

  it('turns absurd nesting into a parse error, not a crash', () => {
    const deep = 'package a\np := ' + '['.repeat(50_000) + ']'.repeat(50_000);
    expect(validate(deep)[0]?.code).toBe('rego_parse_error');
  });

  it('reports the file name given to compile', () => {
    const err = errorOf(() => compile([{ name: 'policies/a.rego', source: 'package a\np if {' }]));
    expect(err.code).toBe('rego_parse_error');
    expect(err.message).toMatch(/^policies\/a\.rego:2:7: rego_parse_error: /);
  });
});

describe('evaluation', () => {
  it('returns variable bindings for a query and nothing when undefined', () => {
    const b = compile(['package t\nq contains x if { some x in input.xs; x > 1 }']);
    expect(b.query('data.t.q[x]', { input: { xs: [1, 2, 3] } })).toEqual([{ x: 2 }, { x: 3 }]);
    expect(b.query('data.t.nope = x')).toEqual([]);
    expect(b.query('x := input.missing')).toEqual([]);
  });

  it('makes a failing built-in undefined, or an error with strictBuiltinErrors', () => {
    const b = compile(['package t\np := x if x := 1 / input.d\nq := count(input.n)']);
    expect(b.eval('data.t.p', { input: { d: 0 } })).toBeUndefined();
    expect(b.eval('data.t.p', { input: { d: 4 } })).toBe(0.25);
    const err = errorOf(() => b.query('x = data.t.p', { input: { d: 0 }, strictBuiltinErrors: true }));
    expect(err.code).toBe('eval_builtin_error');
    expect(err.detail).toBe('div: divide by zero');
    expect(errorOf(() => b.query('x = data.t.q', { input: { n: 5 }, strictBuiltinErrors: true })).code).toBe('eval_type_error');
  });

  it('raises conflicts as eval_conflict_error', () => {
    const b = compile(['package t\np := 1 if input.a\np := 2 if input.b\no[k] := v if { some k, v in input.kv }']);
    expect(b.eval('data.t.p', { input: { a: true } })).toBe(1);
    expect(errorOf(() => b.eval('data.t.p', { input: { a: true, b: true } })).detail).toBe('complete rules must not produce multiple outputs');
    expect(b.eval('data.t.o', { input: { kv: [['x', 1]] } })).toEqual({ '0': ['x', 1] });
  });

  it('replaces input, data and functions with `with`', () => {
    const b = compile(
      [
        'package t\nf(x) := x * 2\np := f(input.n)\nq := data.cfg.limit\nr := y if y := data.t.p with data.t.f as g\ng(x) := x + 100\ns := x if x := time.now_ns() with time.now_ns as 7',
      ],
      {
        data: { cfg: { limit: 3 } },
      },
    );
    expect(b.query('x = data.t.p with input.n as 21')).toEqual([{ x: 42 }]);
    expect(b.query('x = data.t.q with data.cfg.limit as 9')).toEqual([{ x: 9 }]);
    expect(b.query('x = data.t.q')).toEqual([{ x: 3 }]);
    expect(b.eval('data.t.r', { input: { n: 1 } })).toBe(101);
    expect(b.eval('data.t.s')).toBe(7);
  });

  it('stops an evaluation past its time budget', () => {
    const b = compile(['package t\np := count([1 | some a in numbers.range(1, 400); some b in numbers.range(1, 400); some c in numbers.range(1, 400)])']);
    const err = errorOf(() => b.eval('data.t.p', { timeoutMs: 20 }));
    expect(err.code).toBe('eval_cancel_error');
    const small = compile(['package t\np := count([1 | some a in numbers.range(1, 10); some b in numbers.range(1, 10)])']);
    expect(small.eval('data.t.p', { timeoutMs: 1000 })).toBe(100);
  });

  it('reads v0 partial sets when asked (regoVersion 0), v1 objects otherwise', () => {
    const src = 'package t\ndeny[msg] {\n  input.x > 1\n  msg := sprintf("x is %d", [input.x])\n}\ndefault allow = false\nallow { count(deny) == 0 }';
    const v0 = compile([src], { regoVersion: 0 });
    expect(v0.eval('data.t.deny', { input: { x: 2 } })).toEqual(['x is 2']);
    expect(v0.eval('data.t.allow', { input: { x: 0 } })).toBe(true);
    expect(compile([src]).eval('data.t.deny', { input: { x: 2 } })).toEqual({ 'x is 2': true });
    expect(compile([{ source: 'package t\nimport rego.v1\np[x] if some x in [1]', regoVersion: 0 }]).eval('data.t.p')).toEqual({ '1': true });
    expect(validate('package t\ndeny[msg] { msg := "m" }', 'a.rego', 0)).toEqual([]);
  });

  it('keeps big integers exact', () => {
    const b = compile(['package t\np := 9007199254740993 + 2\nq := 9007199254740993 == 9007199254740992']);
    expect(b.evalValue('data.t.p')).toBe(9007199254740995n);
    expect(b.eval('data.t.q')).toBe(false);
  });

  it('supports else chains, every, default and negation', () => {
    const b = compile([
      'package t\ndefault level := "none"\nlevel := "admin" if input.role == "admin"\nelse := "user" if input.role\nall_small if every x in input.xs { x < 10 }\nno_admin if not input.role == "admin"',
    ]);
    expect(b.eval('data.t.level', { input: { role: 'admin' } })).toBe('admin');
    expect(b.eval('data.t.level', { input: { role: 'x' } })).toBe('user');
    expect(b.eval('data.t.level', { input: {} })).toBe('none');
    expect(b.eval('data.t.all_small', { input: { xs: [1, 2] } })).toBe(true);
    expect(b.eval('data.t.all_small', { input: { xs: [1, 20] } })).toBeUndefined();
    expect(b.eval('data.t.no_admin', { input: { role: 'dev' } })).toBe(true);
  });
});

describe('built-ins authorization policies use', () => {
  const b = compile(['package t\nimport rego.v1\nr := x if x := input.f']);
  const one = (expr: string): unknown => b.query(`x := ${expr}`)[0]?.x;

  it('formats, matches and parses', () => {
    expect(one('sprintf("%s has %d items (%.2f%%) %v", ["cart", 3, 12.5, {"a": [1]}])')).toBe('cart has 3 items (12.50%) {"a": [1]}');
    expect(one('glob.match("github.*", ["."], "github.create_issue")')).toBe(true);
    expect(one('glob.match("github.*", ["."], "github.repo.delete")')).toBe(false);
    expect(one('glob.match("admin.**", ["."], "admin.a.b")')).toBe(true);
    expect(one('glob.match("*", [], "foo.bar")')).toBe(false);
    expect(one('glob.match("*hub.com", null, "api.cdn.github.com")')).toBe(true);
    expect(one('glob.match("{cat,bat,[fr]at}", [], "rat")')).toBe(true);
    expect(one('glob.match("[!abc]at", [], "cat")')).toBe(false);
    expect(one('glob.match("*:github:com", [":"], "api:github:com")')).toBe(true);
    expect(one('regex.match(`^a+(b|c)$`, "aaac")')).toBe(true);
    expect(one('net.cidr_contains("10.0.0.0/8", "10.2.3.4")')).toBe(true);
    expect(one('net.cidr_contains("10.0.0.0/8", "11.2.3.4")')).toBe(false);
    expect(one('net.cidr_contains("2001:db8::/32", "2001:db8::1")')).toBe(true);
    expect(one('units.parse_bytes("10MiB")')).toBe(10 * 1024 * 1024);
    expect(one('semver.compare("1.2.3", "1.10.0")')).toBe(-1);
    expect(one('time.parse_rfc3339_ns("2024-01-02T03:04:05.5Z")')).toBe(1704164645500000000);
    expect(one('base64.decode(base64.encode("héllo"))')).toBe('héllo');
    expect(one('urlquery.encode("a b&c")')).toBe('a+b%26c');
    expect(one('json.unmarshal(json.marshal({"a": {1, 2}}))')).toEqual({ a: [1, 2] });
    expect(one('object.get({"a": {"b": 1}}, ["a", "b"], 0)')).toBe(1);
    expect(one('{1, 2, 3} - {2}')).toEqual([1, 3]);
    expect(one('crypto.sha256("abc")')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(one('time.format(1704164645500000000)')).toBe('2024-01-02T03:04:05.5Z');
    expect(one('time.format([1704164645000000000, "Europe/Paris"])')).toBe('2024-01-02T04:04:05+01:00');
    expect(one('io.jwt.decode("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbmEifQ.AAEC")')).toEqual([{ alg: 'HS256' }, { sub: 'ana' }, '000102']);
    expect(one('[x | some x in numbers.range(1, 5); x % 2 == 0]')).toEqual([2, 4]);
  });
});

describe('a tool-gating policy', () => {
  const source = readFileSync(new URL('./tool-gating.rego', import.meta.url), 'utf8');
  const b = compile([{ name: 'tool-gating.rego', source }]);
  const noon = BigInt(Date.parse('2026-01-05T12:00:00Z')) * 1_000_000n;
  const input = (resource: object, subject: object = {}) => ({
    subject: { task: 't1', binding: { write_allowed: true }, user: 'ana', ...subject },
    resource: { connector: 'github', tool: 'github.list_issues', tool_effect: 'read', args: {}, ...resource },
    action: 'call',
  });

  it('allows reads on allowed connectors and writes in working hours', () => {
    expect(b.eval('data.service.gate.allow', { input: input({}), nowNs: noon })).toBe(true);
    expect(b.eval('data.service.gate.allow', { input: input({ tool_effect: 'write', tool: 'github.create_issue' }), nowNs: noon })).toBe(true);
    const night = BigInt(Date.parse('2026-01-05T23:30:00Z')) * 1_000_000n;
    expect(b.eval('data.service.gate.allow', { input: input({ tool_effect: 'write' }), nowNs: night })).toBe(false);
  });

  it('denies with messages', () => {
    const i = input({ tool: 'github.delete_repo', tool_effect: 'destructive', args: { target_ip: '8.8.8.8' } }, { task: undefined });
    expect(b.eval('data.service.gate.allow', { input: i, nowNs: noon })).toBe(false);
    expect(b.eval('data.service.gate.deny', { input: i, nowNs: noon })).toEqual([
      'destructive tool github.delete_repo needs approval for user ana',
      'no task in the subject',
      'target 8.8.8.8 is outside the private network',
      'tool github.delete_repo is blocked by pattern *.delete_*',
    ]);
    expect(b.eval('data.service.gate.allow', { input: input({ connector: 'gmail' }), nowNs: noon })).toBe(false);
  });
});
