/**
 * Where the client writes: results on stdout (raw JSON with --json, readable
 * text otherwise), notes and progress on stderr (silenced by --quiet), HTTP
 * traces on stderr with --verbose. Progress is a bar on a terminal and one
 * plain line per item otherwise (logs of CI jobs stay readable).
 */
import cliProgress from 'cli-progress';

export interface GlobalFlags {
  readonly json: boolean;
  readonly quiet: boolean;
  readonly verbose: boolean;
}

export interface Progress {
  /** one more item done; `note` names it in plain-line mode */
  tick(note: string, amount?: number): void;
  stop(summary: string): void;
}

export class Output {
  constructor(
    readonly flags: GlobalFlags,
    private readonly stdout: NodeJS.WriteStream = process.stdout,
    private readonly stderr: NodeJS.WriteStream = process.stderr,
  ) {}

  /** The command's result: JSON as the server (or command) shaped it, or the human rendering. */
  result(value: unknown, human: () => string): void {
    const text = this.flags.json ? JSON.stringify(value, null, 2) : human();
    if (text !== '') this.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  note(line: string): void {
    if (!this.flags.quiet) this.stderr.write(`${line}\n`);
  }

  trace(line: string): void {
    if (this.flags.verbose) this.stderr.write(`${line}\n`);
  }

  error(line: string): void {
    this.stderr.write(`error: ${line}\n`);
  }

  progress(label: string, total: number, unit: string): Progress {
    if (this.flags.quiet) return { tick: () => undefined, stop: () => undefined };
    if (this.stderr.isTTY) {
      const bar = new cliProgress.SingleBar(
        { format: `${label} [{bar}] {value}/{total} ${unit} | {note}`, stream: this.stderr, hideCursor: true },
        cliProgress.Presets.shades_classic,
      );
      bar.start(total, 0, { note: '' });
      return {
        tick: (note, amount = 1) => bar.increment(amount, { note }),
        stop: (summary) => {
          bar.stop();
          this.stderr.write(`${summary}\n`);
        },
      };
    }
    let done = 0;
    return {
      tick: (note, amount = 1) => {
        done += amount;
        this.stderr.write(`${label} ${done}/${total} ${unit}: ${note}\n`);
      },
      stop: (summary) => this.stderr.write(`${summary}\n`),
    };
  }
}

/** 1536 -> "1.5 KiB" */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit] as string}`;
}

/** Columns padded to their widest cell. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}
