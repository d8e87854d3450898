#!/usr/bin/env node
/**
 * service-proxy-cli: the command-line client for the graph, the file store
 * and pipeline-run reports. It talks HTTP only (SERVICE_API_URL with
 * SERVICE_TOKEN); `ingest scan` works offline. Global flags (--json, --quiet,
 * --verbose) go before or after the command.
 */
import { parseArgs } from 'node:util';
import { ApiClient, readEnvironment } from './api.js';
import { Args, type Command, type OptionSpec } from './command.js';
import { fileCommands } from './commands/files.js';
import { graphCommands } from './commands/graph.js';
import { graphImportCommands } from './commands/graph-import.js';
import { ingestCommands } from './commands/ingest.js';
import { provisionCommands } from './commands/provision.js';
import { reportCommands } from './commands/run-reports.js';
import { kqlCommands } from './commands/kql.js';
import { terraformCommands } from './commands/terraform-provider.js';
import { CliError, EXIT, usage } from './errors.js';
import { Output, type GlobalFlags } from './output.js';

export const COMMANDS: readonly Command[] = [
  ...graphCommands,
  ...graphImportCommands,
  ...fileCommands,
  ...ingestCommands,
  ...reportCommands,
  ...kqlCommands,
  ...provisionCommands,
  ...terraformCommands,
];
const GROUPS = new Set(COMMANDS.filter((command) => command.name.includes(' ')).map((command) => command.name.split(' ')[0] as string));

const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  json: { type: 'boolean', short: 'j' },
  quiet: { type: 'boolean', short: 'q' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
};
const GLOBAL_TOKENS = new Set(['--json', '-j', '--quiet', '-q', '--verbose', '-v', '--help', '-h']);

/** The command named by the first non-flag words, and the arguments left once they are taken out. */
function findCommand(argv: readonly string[]): { command: Command | null; rest: string[] } {
  const words: number[] = [];
  for (let index = 0; index < argv.length && words.length < 2; index += 1) {
    const token = argv[index] as string;
    if (GLOBAL_TOKENS.has(token)) continue;
    if (token.startsWith('-')) break;
    words.push(index);
    if (words.length === 1 && !GROUPS.has(token)) break;
  }
  const name = words.map((index) => argv[index]).join(' ');
  const rest = argv.filter((_, index) => !words.includes(index));
  if (words.length === 0) return { command: null, rest };
  const command = COMMANDS.find((candidate) => candidate.name === name);
  if (!command) {
    const group = argv[words[0] as number] as string;
    throw usage(
      GROUPS.has(group) && words.length === 1
        ? `"${group}" needs a subcommand: ${subcommands(group)}`
        : `unknown command "${name}"${GROUPS.has(group) ? `: try ${subcommands(group)}` : ''}`,
    );
  }
  return { command, rest };
}

const subcommands = (group: string): string =>
  COMMANDS.filter((command) => command.name.startsWith(`${group} `))
    .map((command) => command.name.slice(group.length + 1))
    .join(' | ');

function helpText(command: Command | null): string {
  if (command) return [`service-proxy-cli ${command.name}: ${command.summary}`, ...command.usage.map((line) => `  ${line}`)].join('\n');
  const width = Math.max(...COMMANDS.map((entry) => entry.name.length));
  return [
    'service-proxy-cli <command> [options]   global: --json/-j --quiet/-q --verbose/-v (before or after the command)',
    '',
    ...COMMANDS.map((entry) => `  ${entry.name.padEnd(width)}  ${entry.summary}`),
    '',
    'environment: SERVICE_API_URL (API root with /api/v1), SERVICE_TOKEN, PIPELINE_ID (informational), PIPELINE_RUN_ID (run for log/progress with a login token)',
    `exit codes: ${Object.entries(EXIT)
      .map(([reason, code]) => `${code} ${reason}`)
      .join(', ')}`,
  ].join('\n');
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Runs one invocation; answers the exit code. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let flags: GlobalFlags = { json: argv.some((token) => token === '--json' || token === '-j'), quiet: false, verbose: false };
  let output = new Output(flags);
  try {
    const { command, rest } = findCommand(argv);
    const parsed = parseArgs({
      args: rest,
      options: { ...(command?.options ?? {}), ...GLOBAL_OPTIONS },
      allowPositionals: true,
      strict: true,
    });
    const values = parsed.values as Record<string, string | boolean | (string | boolean)[] | undefined>;
    flags = { json: values['json'] === true, quiet: values['quiet'] === true, verbose: values['verbose'] === true };
    output = new Output(flags);
    if (command === null || values['help'] === true) {
      process.stdout.write(`${helpText(command)}\n`);
      return command === null && values['help'] !== true ? EXIT.usage : EXIT.ok;
    }
    const { min, max } = command.positionals ?? { min: 0, max: 0 };
    if (parsed.positionals.length < min || parsed.positionals.length > max) {
      throw usage(
        `${command.name} takes ${min === max ? min : `${min} to ${max}`} positional argument(s), got ${parsed.positionals.length}\n${helpText(command)}`,
      );
    }
    let client: ApiClient | null = null;
    await command.run({
      args: new Args(values, parsed.positionals),
      output,
      api: () => (client ??= new ApiClient(readEnvironment(env), (line) => output.trace(line))),
      readStdin,
      env,
    });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CliError) {
      output.error(error.message);
      return error.exitCode;
    }
    // parseArgs reports unknown or malformed options with these codes
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
      output.error((error as Error).message);
      return EXIT.usage;
    }
    output.error(flags.verbose ? ((error as Error).stack ?? String(error)) : (error as Error).message);
    return EXIT.api_error;
  }
}

process.exitCode = await main(process.argv.slice(2), process.env);
