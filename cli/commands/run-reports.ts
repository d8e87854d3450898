/** `log`, `progress`, `status`: what a pipeline run reports and checks (the /pipeline-agent API). */
import type { Command } from '../command.js';
import { CliError, usage } from '../errors.js';

const LEVELS = ['debug', 'info', 'warn', 'error', 'agent', 'graph'] as const;

interface GraphStats {
  readonly node_count: number;
  readonly relationship_count: number;
}

export const reportCommands: readonly Command[] = [
  {
    name: 'log',
    summary: "Append a line to the pipeline run's log",
    usage: ['"<message>" [--level debug|info|warn|error|agent|graph] (default info) [--phase <name>]'],
    options: { level: { type: 'string' }, phase: { type: 'string' } },
    positionals: { min: 1, max: 1 },
    run: async ({ args, api, output }) => {
      const client = api();
      const level = args.choice('level', LEVELS, 'info');
      const phase = args.string('phase');
      const answer = await client.json<{ run_id: string; seq: number }>('POST', '/pipeline-agent/log', {
        body: { message: args.positionals[0], level, ...(phase === undefined ? {} : { phase }), ...runId(client.env.pipelineRunId) },
      });
      output.result(answer, () => (output.flags.quiet ? '' : `logged #${answer.seq} to run ${answer.run_id}`));
    },
  },
  {
    name: 'progress',
    summary: 'Report progress of the pipeline run',
    usage: ['<fraction 0.0-1.0> ["<message>"] [--phase <name>]'],
    options: { phase: { type: 'string' } },
    positionals: { min: 1, max: 2 },
    run: async ({ args, api, output }) => {
      const raw = args.positionals[0] as string;
      const fraction = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(fraction) || fraction < 0 || fraction > 1) {
        throw usage(`progress takes a fraction from 0.0 to 1.0, got "${raw}"`);
      }
      const client = api();
      const message = args.positionals[1];
      const phase = args.string('phase');
      const answer = await client.json<{ run_id: string; seq: number }>('POST', '/pipeline-agent/progress', {
        body: { fraction, ...(message === undefined ? {} : { message }), ...(phase === undefined ? {} : { phase }), ...runId(client.env.pipelineRunId) },
      });
      output.result(answer, () => (output.flags.quiet ? '' : `progress ${Math.round(fraction * 100)}% reported to run ${answer.run_id}`));
    },
  },
  {
    name: 'status',
    summary: 'Check the connection, the token and the graph',
    usage: ['(no arguments)'],
    options: {},
    run: async ({ api, output }) => {
      const client = api();
      let agent: { organization_id: string; token_kind: string; run: { id: string; status: string } | null };
      try {
        agent = await client.json('GET', '/pipeline-agent/status', { query: { run_id: client.env.pipelineRunId ?? undefined } });
      } catch (error) {
        // a status check that cannot connect still answers in --json, then fails with the connection's exit code
        if (error instanceof CliError && error.reason === 'cannot_connect') {
          output.result({ connected: false, api_url: client.env.apiUrl, error: error.message }, () => '');
        }
        throw error;
      }
      let graphStats: GraphStats | null = null;
      try {
        const stats = await client.json<GraphStats>('GET', '/graph/stats');
        graphStats = { node_count: stats.node_count, relationship_count: stats.relationship_count };
      } catch (error) {
        // a token without graph access still has a status: say so instead of failing
        if (!(error instanceof CliError) || (error.reason !== 'api_error' && error.reason !== 'not_found')) throw error;
        output.note(`graph stats unavailable: ${error.message}`);
      }
      const status = {
        connected: true,
        api_url: client.env.apiUrl,
        pipeline_id: client.env.pipelineId,
        organization_id: agent.organization_id,
        token_kind: agent.token_kind,
        run: agent.run === null ? null : { id: agent.run.id, status: agent.run.status },
        graph_stats: graphStats,
      };
      output.result(status, () =>
        [
          `connected to ${status.api_url}`,
          `token: ${status.token_kind} (organization ${status.organization_id})`,
          ...(status.pipeline_id === null ? [] : [`pipeline: ${status.pipeline_id}`]),
          ...(status.run === null ? [] : [`run: ${status.run.id} (${status.run.status})`]),
          graphStats === null ? 'graph: unavailable' : `graph: ${graphStats.node_count} nodes, ${graphStats.relationship_count} relationships`,
        ].join('\n'),
      );
    },
  },
];

/** A login token names its run through PIPELINE_RUN_ID; a pipeline token carries it. */
const runId = (pipelineRunId: string | null) => (pipelineRunId === null ? {} : { run_id: pipelineRunId });
