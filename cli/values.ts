/** Parsing of argument values: `--prop KEY=VALUE`, `Label:key` references, JSON input, globs. */
import { readFile } from 'node:fs/promises';
import picomatch from 'picomatch';
import { CliError, usage } from './errors.js';

export type PropValue = string | number | boolean;

/** `true`/`false` -> boolean, integers and decimals -> number, anything else stays a string. */
export function parseValue(raw: string): PropValue {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (/^-?\d+$/.test(raw)) {
    const integer = Number(raw);
    // beyond 2^53 a number would silently change the value: keep the text
    return Number.isSafeInteger(integer) ? integer : raw;
  }
  if (/^-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?$/.test(raw)) return Number(raw);
  return raw;
}

/** Repeated `--prop KEY=VALUE` into an object; thrown when one lacks `=` or a key. */
export function parseProps(props: readonly string[] | undefined): Record<string, PropValue> {
  const result: Record<string, PropValue> = {};
  for (const prop of props ?? []) {
    const equals = prop.indexOf('=');
    if (equals <= 0) throw usage(`--prop takes KEY=VALUE, got "${prop}"`);
    result[prop.slice(0, equals)] = parseValue(prop.slice(equals + 1));
  }
  return result;
}

export interface NodeRef {
  readonly label: string;
  readonly key: string;
}

/** `Label:key` (the key may itself hold colons); thrown with exit code invalid_node_ref otherwise. */
export function parseNodeRef(raw: string, flag: string): NodeRef {
  const colon = raw.indexOf(':');
  const label = colon < 0 ? '' : raw.slice(0, colon);
  const key = colon < 0 ? '' : raw.slice(colon + 1);
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(label) || key.length === 0) {
    throw new CliError('invalid_node_ref', `invalid node reference "${raw}" for ${flag}: must be Label:key (for example Service:checkout)`);
  }
  return { label, key };
}

/** Thrown with exit code invalid_glob when the pattern does not compile (the server uses the same rules). */
export function checkGlob(pattern: string, flag: string): (path: string) => boolean {
  try {
    return picomatch(pattern, { strictBrackets: true, dot: true, basename: !pattern.includes('/') });
  } catch (error) {
    throw new CliError('invalid_glob', `invalid filter pattern "${pattern}" for ${flag}: ${(error as Error).message}`);
  }
}

export interface InputSource {
  readonly file?: string | undefined;
  readonly data?: string | undefined;
  readonly stdin?: boolean | undefined;
}

/** The JSON array given by exactly one of --file, --data, --stdin. */
export async function readJsonArray(source: InputSource, readStdin: () => Promise<string>): Promise<unknown[]> {
  const given = [source.file !== undefined, source.data !== undefined, source.stdin === true].filter(Boolean).length;
  if (given !== 1) {
    throw new CliError('input_source', `exactly one of --file, --data, --stdin is required (got ${given})`);
  }
  let text: string;
  let origin: string;
  if (source.file !== undefined) {
    origin = source.file;
    try {
      text = await readFile(source.file, 'utf8');
    } catch (error) {
      throw usage(`cannot read --file ${source.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  } else if (source.data !== undefined) {
    origin = '--data';
    text = source.data;
  } else {
    origin = 'standard input';
    text = await readStdin();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw usage(`${origin} is not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw usage(`${origin} must hold a JSON array`);
  return parsed as unknown[];
}
