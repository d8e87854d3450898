/** What a command is: its words, options (node:util parseArgs form), positionals and what it does. */
import type { ApiClient } from './api.js';
import { usage } from './errors.js';
import type { Output } from './output.js';

export type OptionSpec = { readonly type: 'string' | 'boolean'; readonly multiple?: boolean; readonly short?: string; readonly default?: string };

export interface Command {
  /** `graph search`, `log` */
  readonly name: string;
  readonly summary: string;
  /** one line per option for --help, e.g. `--query <text>  (required)` */
  readonly usage: readonly string[];
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** how many positionals it takes */
  readonly positionals?: { readonly min: number; readonly max: number };
  /** works without SERVICE_API_URL/SERVICE_TOKEN and without a server */
  readonly offline?: boolean;
  run(context: CommandContext): Promise<void>;
}

export interface CommandContext {
  readonly args: Args;
  readonly output: Output;
  /** the API client; reading it checks the environment (exit 3/4) */
  readonly api: () => ApiClient;
  readonly readStdin: () => Promise<string>;
  /** the process environment, read only in main.ts (provision's TF_VAR_ values) */
  readonly env: NodeJS.ProcessEnv;
}

type Values = Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;

/** Typed reads of parsed options. */
export class Args {
  constructor(
    private readonly values: Values,
    readonly positionals: readonly string[],
  ) {}

  string(name: string): string | undefined {
    const value = this.values[name];
    return typeof value === 'string' ? value : undefined;
  }

  required(name: string): string {
    const value = this.string(name);
    if (value === undefined || value === '') throw usage(`--${name} is required`);
    return value;
  }

  flag(name: string): boolean {
    return this.values[name] === true;
  }

  list(name: string): string[] {
    const value = this.values[name];
    return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  }

  /** thrown when present but not an integer within range */
  integer(name: string, fallback: number, min: number, max: number): number {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) throw usage(`--${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    return value;
  }

  /** thrown when present but not one of `choices` */
  choice<T extends string>(name: string, choices: readonly T[], fallback: T): T {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if (!(choices as readonly string[]).includes(raw)) throw usage(`--${name} must be one of ${choices.join('|')}, got "${raw}"`);
    return raw as T;
  }
}
