/**
 * `ingest scan` (offline: what a directory holds, by extension) and
 * `ingest upload` (the matching files into the file store under --prefix,
 * where pipelines pick them up; identical files are not sent again).
 */
import type { Command } from '../command.js';
import { statsByExtension, walkDirectory } from '../local-files.js';
import { formatBytes, table } from '../output.js';
import { remotePath, uploadAll } from '../uploader.js';

const filterOptions = { dir: { type: 'string' }, include: { type: 'string', multiple: true }, exclude: { type: 'string', multiple: true } } as const;

export const ingestCommands: readonly Command[] = [
  {
    name: 'ingest scan',
    summary: 'Count files and sizes by extension (works offline)',
    offline: true,
    usage: ['--dir <dir> (required) [--include <glob> ...] [--exclude <glob> ...] [--dry-run] (also lists every file)'],
    options: { ...filterOptions, 'dry-run': { type: 'boolean' } },
    run: async ({ args, output }) => {
      const files = await walkDirectory(args.required('dir'), { include: args.list('include'), exclude: args.list('exclude') });
      const extensions = statsByExtension(files);
      const totalBytes = files.reduce((sum, file) => sum + file.size, 0);
      const dryRun = args.flag('dry-run');
      const report = {
        dir: args.required('dir'),
        total_files: files.length,
        total_bytes: totalBytes,
        extensions,
        ...(dryRun ? { files: files.map((file) => ({ path: file.relative, size: file.size })) } : {}),
      };
      output.result(report, () => {
        const lines = [
          table(
            ['EXTENSION', 'FILES', 'SIZE'],
            extensions.map((entry) => [entry.extension, String(entry.files), formatBytes(entry.bytes)]),
          ),
          `total: ${files.length} files, ${formatBytes(totalBytes)}`,
        ];
        if (dryRun) lines.push('would upload:', ...files.map((file) => `  ${file.relative} (${formatBytes(file.size)})`));
        return lines.join('\n');
      });
    },
  },
  {
    name: 'ingest upload',
    summary: 'Upload the matching files of a directory to the file store',
    usage: ['--dir <dir> (required) [--include <glob> ...] [--exclude <glob> ...] [--prefix <remote folder>] (default empty)'],
    options: { ...filterOptions, prefix: { type: 'string' } },
    run: async ({ args, api, output }) => {
      const files = await walkDirectory(args.required('dir'), { include: args.list('include'), exclude: args.list('exclude') });
      const prefix = args.string('prefix');
      const summary = await uploadAll(
        api(),
        output,
        files.map((file) => ({ local: file.absolute, remote: remotePath(prefix, file.relative), size: file.size })),
        'ingest upload',
      );
      output.result(summary, () => `${summary.uploaded.length} uploaded, ${summary.skipped.length} unchanged (${formatBytes(summary.bytes_sent)} sent)`);
    },
  },
];
