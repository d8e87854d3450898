/**
 * Audio formats of voice sessions and the conversions between them. The
 * provider side always speaks PCM16 little-endian mono at 24 kHz; a client
 * speaking G.711 (µ-law or A-law, 8 kHz, one byte a sample) is transcoded
 * here: decoded by table and upsampled x3 (linear) on the way in, averaged x3
 * and encoded on the way out. No npm package covers G.711; the algorithms are
 * ITU-T G.711's (the Sun reference implementation's segment search).
 */

export const AUDIO_FORMATS = ['pcm16', 'g711_ulaw', 'g711_alaw'] as const;
export type AudioFormat = (typeof AUDIO_FORMATS)[number];

/** PCM16 at 24 kHz: bytes per millisecond */
export const PCM16_BYTES_PER_MS = 48;

const BIAS = 0x84;
const CLIP = 32635;

function ulawEncodeSample(sample: number): number {
  let pcm = sample;
  const sign = pcm < 0 ? 0x80 : 0;
  if (sign !== 0) pcm = -pcm;
  if (pcm > CLIP) pcm = CLIP;
  pcm += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (pcm & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (pcm >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

function ulawDecodeSample(byte: number): number {
  const value = ~byte & 0xff;
  const sign = value & 0x80;
  const exponent = (value >> 4) & 0x07;
  const mantissa = value & 0x0f;
  const magnitude = (((mantissa << 3) + BIAS) << exponent) - BIAS;
  return sign !== 0 ? -magnitude : magnitude;
}

function alawEncodeSample(sample: number): number {
  let pcm = sample;
  const sign = pcm >= 0 ? 0x80 : 0;
  if (sign === 0) pcm = -pcm - 1;
  if (pcm > 32767) pcm = 32767;
  let encoded: number;
  if (pcm < 256) encoded = pcm >> 4;
  else {
    let exponent = 7;
    for (let mask = 0x4000; (pcm & mask) === 0 && exponent > 1; mask >>= 1) exponent--;
    encoded = (exponent << 4) | ((pcm >> (exponent + 3)) & 0x0f);
  }
  return (encoded | sign) ^ 0x55;
}

function alawDecodeSample(byte: number): number {
  const value = byte ^ 0x55;
  const exponent = (value >> 4) & 0x07;
  let magnitude = (value & 0x0f) << 4;
  magnitude = exponent === 0 ? magnitude + 8 : (magnitude + 0x108) << (exponent - 1);
  return (value & 0x80) !== 0 ? magnitude : -magnitude;
}

const table = (decode: (byte: number) => number): Int16Array => Int16Array.from({ length: 256 }, (_, byte) => decode(byte));
const ULAW_DECODE = table(ulawDecodeSample);
const ALAW_DECODE = table(alawDecodeSample);
// 65,536 entries each: one lookup per sample on the way out
const encodeTable = (encode: (sample: number) => number): Uint8Array => Uint8Array.from({ length: 65536 }, (_, index) => encode(index - 32768));
let ulawEncode: Uint8Array | null = null;
let alawEncode: Uint8Array | null = null;

/** G.711 bytes (8 kHz) -> PCM16 samples (8 kHz) */
function decodeG711(bytes: Uint8Array, law: 'ulaw' | 'alaw'): Int16Array {
  const lookup = law === 'ulaw' ? ULAW_DECODE : ALAW_DECODE;
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = lookup[bytes[i] as number] as number;
  return out;
}

/** PCM16 samples (8 kHz) -> G.711 bytes */
export function encodeG711(samples: Int16Array, law: 'ulaw' | 'alaw'): Uint8Array {
  const lookup = law === 'ulaw' ? (ulawEncode ??= encodeTable(ulawEncodeSample)) : (alawEncode ??= encodeTable(alawEncodeSample));
  const out = new Uint8Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = lookup[(samples[i] as number) + 32768] as number;
  return out;
}

const pcmView = (bytes: Uint8Array): Int16Array => {
  // an odd trailing byte is dropped: PCM16 frames are whole samples
  const aligned = bytes.byteOffset % 2 === 0 ? bytes : Uint8Array.from(bytes);
  return new Int16Array(aligned.buffer, aligned.byteOffset, aligned.byteLength >> 1);
};

/**
 * Upsamples 8 kHz to 24 kHz by linear interpolation. `previous` is the last
 * sample of the previous frame (frames join without a click); 3 samples out per sample in.
 */
function upsample3(samples: Int16Array, previous: number): Int16Array {
  const out = new Int16Array(samples.length * 3);
  let last = previous;
  for (let i = 0; i < samples.length; i++) {
    const next = samples[i] as number;
    out[i * 3] = Math.round(last + (next - last) / 3);
    out[i * 3 + 1] = Math.round(last + ((next - last) * 2) / 3);
    out[i * 3 + 2] = next;
    last = next;
  }
  return out;
}

/** Downsamples 24 kHz to 8 kHz by averaging each group of three (a crude low-pass); a trailing partial group is dropped */
function downsample3(samples: Int16Array): Int16Array {
  const out = new Int16Array(Math.floor(samples.length / 3));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(((samples[i * 3] as number) + (samples[i * 3 + 1] as number) + (samples[i * 3 + 2] as number)) / 3);
  return out;
}

const asBuffer = (view: Int16Array | Uint8Array): Buffer => Buffer.from(view.buffer, view.byteOffset, view.byteLength);

/** One direction of one session: keeps what joins frames (the last sample, a partial sample group). */
export class Transcoder {
  private previous = 0;
  private carry: Buffer = Buffer.alloc(0);

  constructor(private readonly format: AudioFormat) {}

  /** client audio -> provider PCM16 24 kHz */
  toProvider(bytes: Buffer): Buffer {
    if (this.format === 'pcm16') return bytes;
    const decoded = decodeG711(bytes, this.format === 'g711_ulaw' ? 'ulaw' : 'alaw');
    if (decoded.length > 0) {
      const up = upsample3(decoded, this.previous);
      this.previous = decoded[decoded.length - 1] as number;
      return asBuffer(up);
    }
    return Buffer.alloc(0);
  }

  /** provider PCM16 24 kHz -> client audio */
  toClient(bytes: Buffer): Buffer {
    if (this.format === 'pcm16') return bytes;
    // keep samples that do not fill a group of three (6 bytes) for the next delta
    const joined = this.carry.length > 0 ? Buffer.concat([this.carry, bytes]) : bytes;
    const usable = joined.length - (joined.length % 6);
    this.carry = Buffer.from(joined.subarray(usable));
    const down = downsample3(pcmView(joined.subarray(0, usable)));
    return asBuffer(encodeG711(down, this.format === 'g711_ulaw' ? 'ulaw' : 'alaw'));
  }
}
