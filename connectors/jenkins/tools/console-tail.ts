/** jenkins.console_tail: the last lines of a build's console log. */
import type { ConnectorTool } from '../../contract.js';
import { BUILD_ARG, JOB_ARG, jobPath } from '../config.js';
import { withJenkins } from './shared.js';

/** keep the answer readable for the model: at most this many characters */
const MAX_CHARS = 60_000;

export const consoleTailTool: ConnectorTool = {
  name: 'console_tail',
  effect: 'read',
  description:
    "The last lines of a Jenkins build's console output (default: the last build), to see why it failed. " +
    'Returns the lines, how many the log has in total, and whether the build is still running.',
  input_schema: {
    type: 'object',
    additionalProperties: false,
    required: ['job'],
    properties: {
      job: JOB_ARG,
      build: BUILD_ARG,
      lines: { type: 'integer', minimum: 1, maximum: 2000, default: 100, description: 'how many lines from the end' },
    },
  },
  run: (args, ctx) =>
    withJenkins(ctx, async (client) => {
      const buildPath = `${jobPath(args['job'] as string)}/${encodeURIComponent(String(args['build']))}`;
      // resolves a permalink to its number and says whether the log is still growing
      const { data: build } = await client.json<{ number: number; building: boolean; result: string | null }>({
        path: `${buildPath}/api/json`,
        query: { tree: 'number,building,result' },
        signal: ctx.signal,
      });
      const response = await client.send({ path: `${buildPath}/consoleText`, headers: { accept: 'text/plain' }, signal: ctx.signal });
      const { lines, total } = await tailLines(response, args['lines'] as number);
      let tail = lines;
      // very long lines: keep the end, where the failure usually is
      while (tail.join('\n').length > MAX_CHARS && tail.length > 1) tail = tail.slice(1);
      return { job: args['job'], build: build.number, result: build.result, building: build.building, total_lines: total, lines: tail };
    }),
};

/** The last `count` lines of a streamed body: memory stays bounded however long the console is. */
async function tailLines(response: Response, count: number): Promise<{ lines: string[]; total: number }> {
  const tail: string[] = [];
  let total = 0;
  let partial = '';
  const keep = (line: string): void => {
    total += 1;
    tail.push(line.replace(/\r$/, ''));
    if (tail.length > count) tail.shift();
  };
  if (response.body) {
    for await (const chunk of response.body.pipeThrough(new TextDecoderStream())) {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      parts.forEach(keep);
    }
  }
  if (partial !== '') keep(partial);
  return { lines: tail, total };
}
