/**
 * Every way the client fails, each with its own exit code so scripts can
 * tell them apart. The table is printed by `--help` and documented in
 * cli/README.md.
 */

export const EXIT = {
  ok: 0,
  /** the server answered an error not listed below (4xx/5xx) */
  api_error: 1,
  /** unknown command or option, missing or malformed argument */
  usage: 2,
  missing_api_url: 3,
  missing_token: 4,
  cannot_connect: 5,
  /** 401: the token is expired, revoked or invalid */
  unauthorized: 6,
  /** not exactly one of --file, --data, --stdin */
  input_source: 7,
  /** a node reference that is not `Label:key` */
  invalid_node_ref: 8,
  /** a glob that does not compile */
  invalid_glob: 9,
  /** 404: the node, file or run does not exist */
  not_found: 10,
} as const;

export type ExitReason = keyof typeof EXIT;

export class CliError extends Error {
  constructor(
    readonly reason: Exclude<ExitReason, 'ok'>,
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }

  get exitCode(): number {
    return EXIT[this.reason];
  }
}

export const usage = (message: string): CliError => new CliError('usage', message);
