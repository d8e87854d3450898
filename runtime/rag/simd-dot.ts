/**
 * Dot products of one query against every row of a matrix, in WebAssembly
 * with 128-bit SIMD (f32x4): the exact scan of vector-index.ts without a
 * JavaScript loop per component. The module is ~150 bytes, assembled here
 * (no toolchain, no package): one function
 * `dots(data, query, out, outEnd, rowBytes)` that, for each row from `data`
 * (rows `rowBytes` apart, `rowBytes` a multiple of 16), stores the row's dot
 * product with `query` as an f32 at `out`, advancing `out` by 4 until `outEnd`.
 * All pointers are byte offsets in the instance's memory.
 */

const leb = (value: number): number[] => {
  const out: number[] = [];
  let rest = value >>> 0;
  do {
    let byte = rest & 0x7f;
    rest >>>= 7;
    if (rest !== 0) byte |= 0x80;
    out.push(byte);
  } while (rest !== 0);
  return out;
};
const section = (id: number, bytes: number[]): number[] => [id, ...leb(bytes.length), ...bytes];
const vector = (items: number[][]): number[] => [...leb(items.length), ...items.flat()];
const name = (text: string): number[] => [...leb(text.length), ...Buffer.from(text, 'latin1')];

const SIMD = 0xfd;
const [GET, SET, TEE] = [0x20, 0x21, 0x22];
const lane = (index: number): number[] => [GET, 6, SIMD, 0x1f, index];
// params: 0 data, 1 query, 2 out, 3 outEnd, 4 rowBytes; locals: 5 offset (i32), 6 accumulator (v128)
const BODY = [
  ...[2, 1, 0x7f, 1, 0x7b],
  ...[0x02, 0x40, 0x03, 0x40], // block, loop (rows)
  ...[GET, 2, GET, 3, 0x4f, 0x0d, 1], // out >= outEnd: done
  ...[SIMD, 0x0c, ...new Array<number>(16).fill(0), SET, 6], // accumulator = 0
  ...[0x41, 0, SET, 5], // offset = 0
  ...[0x03, 0x40], // loop (components, 4 at a time)
  ...[GET, 6],
  ...[GET, 0, GET, 5, 0x6a, SIMD, 0x00, 0, 0], // v128.load data + offset
  ...[GET, 1, GET, 5, 0x6a, SIMD, 0x00, 0, 0], // v128.load query + offset
  ...[SIMD, 0xe6, 0x01, SIMD, 0xe4, 0x01, SET, 6], // accumulator += a * b (f32x4.mul, f32x4.add)
  ...[GET, 5, 0x41, 16, 0x6a, TEE, 5, GET, 4, 0x49, 0x0d, 0], // offset += 16; offset < rowBytes: again
  0x0b,
  ...[GET, 2, ...lane(0), ...lane(1), 0x92, ...lane(2), 0x92, ...lane(3), 0x92, 0x38, 2, 0], // f32.store out, sum of lanes
  ...[GET, 2, 0x41, 4, 0x6a, SET, 2], // out += 4
  ...[GET, 0, GET, 4, 0x6a, SET, 0], // data += rowBytes
  ...[0x0c, 0, 0x0b, 0x0b, 0x0b],
];
const I32X4_LANE = (local: number, index: number): number[] => [GET, local, SIMD, 0x1b, index];
const widened = (extend: number): number[] => [GET, 7, SIMD, extend, 0x01, GET, 8, SIMD, extend, 0x01, SIMD, 0xba, 0x01, SIMD, 0xae, 0x01];
// `dots8`: the same walk over int8 rows (`rowBytes` a multiple of 16), an i32 dot product per row:
// 16 bytes at a time, widened to i16 (low and high halves), i32x4.dot_i16x8_s, summed in i32x4.
// locals: 5 offset (i32), 6 accumulator, 7 data bytes, 8 query bytes (v128)
const BODY8 = [
  ...[2, 1, 0x7f, 3, 0x7b],
  ...[0x02, 0x40, 0x03, 0x40], // block, loop (rows)
  ...[GET, 2, GET, 3, 0x4f, 0x0d, 1], // out >= outEnd: done
  ...[SIMD, 0x0c, ...new Array<number>(16).fill(0), SET, 6], // accumulator = 0
  ...[0x41, 0, SET, 5], // offset = 0
  ...[0x03, 0x40], // loop (16 components at a time)
  ...[GET, 0, GET, 5, 0x6a, SIMD, 0x00, 0, 0, SET, 7], // data bytes
  ...[GET, 1, GET, 5, 0x6a, SIMD, 0x00, 0, 0, SET, 8], // query bytes
  ...[GET, 6, ...widened(0x87), ...widened(0x88), SET, 6], // += dot(low halves) + dot(high halves)
  ...[GET, 5, 0x41, 16, 0x6a, TEE, 5, GET, 4, 0x49, 0x0d, 0], // offset += 16; offset < rowBytes: again
  0x0b,
  ...[GET, 2, ...I32X4_LANE(6, 0), ...I32X4_LANE(6, 1), 0x6a, ...I32X4_LANE(6, 2), 0x6a, ...I32X4_LANE(6, 3), 0x6a, 0x36, 2, 0], // i32.store
  ...[GET, 2, 0x41, 4, 0x6a, SET, 2], // out += 4
  ...[GET, 0, GET, 4, 0x6a, SET, 0], // data += rowBytes
  ...[0x0c, 0, 0x0b, 0x0b, 0x0b],
];
const MODULE = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  ...section(1, vector([[0x60, 5, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0]])),
  ...section(2, vector([[...name('env'), ...name('memory'), 0x02, 0x00, 0x01]])),
  ...section(3, vector([[0], [0]])),
  ...section(
    7,
    vector([
      [...name('dots'), 0x00, 0x00],
      [...name('dots8'), 0x00, 0x01],
    ]),
  ),
  ...section(
    10,
    vector([
      [...leb(BODY.length), ...BODY],
      [...leb(BODY8.length), ...BODY8],
    ]),
  ),
]);

const compiled: WebAssembly.Module | null = (() => {
  try {
    return WebAssembly.validate(MODULE) ? new WebAssembly.Module(MODULE) : null;
  } catch {
    return null;
  }
})();

const PAGE = 65_536;

/** whether this runtime runs the SIMD module (else vector-index.ts scans in JavaScript) */
export const SIMD_AVAILABLE = compiled !== null;

/** A matrix of `rows` x `dimension` float32 in WebAssembly memory, the dimension padded to a multiple of 4 with zeros. */
export class SimdMatrix {
  readonly stride: number;
  private readonly memory: WebAssembly.Memory;
  private readonly dots: (data: number, query: number, out: number, outEnd: number, rowBytes: number) => void;
  private readonly queryAt: number;
  private readonly outAt: number;
  /** the rows, `stride` floats apart (write them before searching) */
  readonly data: Float32Array;
  private readonly query: Float32Array;
  /** the scores of the last `scan`, one per row */
  readonly scores: Float32Array;

  constructor(
    readonly rows: number,
    readonly dimension: number,
  ) {
    if (compiled === null) throw new Error('WebAssembly SIMD is not available');
    this.stride = Math.ceil(dimension / 4) * 4;
    const dataBytes = rows * this.stride * 4;
    this.queryAt = dataBytes;
    this.outAt = dataBytes + this.stride * 4;
    const bytes = this.outAt + rows * 4;
    this.memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) });
    const instance = new WebAssembly.Instance(compiled, { env: { memory: this.memory } });
    this.dots = instance.exports['dots'] as SimdMatrix['dots'];
    this.data = new Float32Array(this.memory.buffer, 0, rows * this.stride);
    this.query = new Float32Array(this.memory.buffer, this.queryAt, this.stride);
    this.scores = new Float32Array(this.memory.buffer, this.outAt, rows);
  }

  /** every row's dot product with `query` (of `dimension` components) into `scores` */
  scan(query: Float32Array): Float32Array {
    this.query.fill(0);
    this.query.set(query.subarray(0, this.dimension));
    if (this.rows > 0) this.dots(0, this.queryAt, this.outAt, this.outAt + this.rows * 4, this.stride * 4);
    return this.scores;
  }
}

/**
 * A matrix of `rows` x `dimension` int8 in WebAssembly memory (the dimension padded to a multiple of
 * 16 with zeros), each row quantized with its own scale (its largest magnitude maps to 127): a
 * quarter of the float32 matrix's bytes, so a scan that reads every row moves a quarter of the
 * memory. Its scores approximate the float dot products (about 1e-2 off for unit vectors): callers
 * take candidates from it and score them again exactly.
 */
export class Int8Matrix {
  readonly stride: number;
  private readonly dots8: (data: number, query: number, out: number, outEnd: number, rowBytes: number) => void;
  private readonly queryAt: number;
  private readonly outAt: number;
  private readonly data: Int8Array;
  private readonly query: Int8Array;
  private readonly dots: Int32Array;
  private readonly scales: Float32Array;
  /** the approximate scores of the last `scan`, one per row */
  readonly scores: Float32Array;

  constructor(
    readonly rows: number,
    readonly dimension: number,
  ) {
    if (compiled === null) throw new Error('WebAssembly SIMD is not available');
    this.stride = Math.ceil(dimension / 16) * 16;
    this.queryAt = rows * this.stride;
    this.outAt = Math.ceil((this.queryAt + this.stride) / 4) * 4;
    const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil((this.outAt + rows * 4) / PAGE)) });
    const instance = new WebAssembly.Instance(compiled, { env: { memory } });
    this.dots8 = instance.exports['dots8'] as Int8Matrix['dots8'];
    this.data = new Int8Array(memory.buffer, 0, rows * this.stride);
    this.query = new Int8Array(memory.buffer, this.queryAt, this.stride);
    this.dots = new Int32Array(memory.buffer, this.outAt, rows);
    this.scales = new Float32Array(rows);
    this.scores = new Float32Array(rows);
  }

  /** quantizes `vector` into row `row` */
  set(row: number, vector: Float32Array): void {
    this.scales[row] = quantize(vector.subarray(0, this.dimension), this.data.subarray(row * this.stride, (row + 1) * this.stride));
  }

  /** every row's approximate dot product with `query` into `scores` */
  scan(query: Float32Array): Float32Array {
    this.query.fill(0);
    const queryScale = quantize(query.subarray(0, this.dimension), this.query);
    if (this.rows > 0) this.dots8(0, this.queryAt, this.outAt, this.outAt + this.rows * 4, this.stride);
    for (let row = 0; row < this.rows; row++) this.scores[row] = (this.dots[row] as number) * (this.scales[row] as number) * queryScale;
    return this.scores;
  }
}

/** `vector` as int8 into `into` (its largest magnitude becomes 127); answers the scale back to floats */
function quantize(vector: Float32Array, into: Int8Array): number {
  let largest = 0;
  for (let index = 0; index < vector.length; index++) largest = Math.max(largest, Math.abs(vector[index] as number));
  if (largest === 0) return 0;
  const scale = largest / 127;
  for (let index = 0; index < vector.length; index++) into[index] = Math.round((vector[index] as number) / scale);
  return scale;
}
