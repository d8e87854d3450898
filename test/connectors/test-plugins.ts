/** Plugin objects for connector tests: third-party-shaped code written against the contract. */
import { ToolError, type ConnectorPlugin, type ConnectorTool } from '../../connectors/contract.js';

export const tool = (overrides: Partial<ConnectorTool> & { name: string }): ConnectorTool => ({
  description: `The ${overrides.name} tool.`,
  effect: 'read',
  input_schema: { type: 'object', properties: {}, additionalProperties: false },
  run: async () => ({ ok: true }),
  ...overrides,
});

export const plugin = (overrides: Partial<ConnectorPlugin> & { kind: string }): ConnectorPlugin => ({
  version: '1.0.0',
  contract: '^1',
  description: `The ${overrides.kind} connector.`,
  configSchema: { type: 'object' },
  validate: async () => ({ ok: true }),
  tools: [tool({ name: 'ping' })],
  ...overrides,
});

/** a code host with a token config, a few tools with real-looking schemas */
export const codeHost = plugin({
  kind: 'github',
  description: 'GitHub code host: repositories, issues, pull requests.',
  configSchema: {
    type: 'object',
    properties: { token: { type: 'string', minLength: 1 }, base_url: { type: 'string', format: 'uri', default: 'https://api.github.com' } },
    required: ['token'],
    additionalProperties: false,
  },
  tools: [
    tool({
      name: 'search_issues',
      description: 'Search issues and pull requests of the repositories by text, state and label.',
      input_schema: {
        type: 'object',
        properties: {
          query: { type: 'string', minLength: 1 },
          state: { enum: ['open', 'closed', 'all'], default: 'open' },
          labels: { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 5 },
          filters: {
            type: 'object',
            properties: { author: { type: 'string', format: 'email' }, since: { type: 'string', format: 'date-time' } },
            additionalProperties: false,
          },
        },
        required: ['query'],
        additionalProperties: false,
      },
      run: async (args, ctx) => ({ args, source: ctx.sourceId, config: ctx.config, org: ctx.orgId, actor: ctx.actorId ?? null }),
    }),
    tool({
      name: 'create_issue',
      effect: 'write',
      description: 'Open a new issue in a repository.',
      input_schema: {
        type: 'object',
        properties: { repo: { type: 'string', pattern: '^[^/]+/[^/]+$' }, title: { type: 'string', minLength: 1 } },
        required: ['repo', 'title'],
        additionalProperties: false,
      },
      run: async (args) => ({ created: args['title'] }),
    }),
    tool({ name: 'get_file', description: 'Read one file of a repository at a ref.' }),
  ],
});

/** codeHost's create_issue as the catalog lists it when the "Acme GitHub" source (src_acme) offers it */
export const acmeCreateIssueEntry = {
  name: 'github.create_issue',
  description: 'Open a new issue in a repository.',
  input_schema: codeHost.tools[1]?.input_schema,
  effect: 'write',
  connector: 'github',
  source_id: 'src_acme',
  source_name: 'Acme GitHub',
};

export const chat = plugin({
  kind: 'slack',
  description: 'Slack chat: channels and messages.',
  tools: [
    tool({ name: 'post_message', effect: 'write', description: 'Post a message to a chat channel.' }),
    tool({ name: 'list_channels', description: 'List the chat channels the bot can see.' }),
  ],
});

/** tools that fail in every way a tool can */
export const failing = plugin({
  kind: 'flaky',
  sourceless: true,
  tools: [
    tool({
      name: 'tool_error',
      run: async () => {
        throw new ToolError('rate_limited_upstream', 'the upstream API said slow down', { retry_after_s: 30 });
      },
    }),
    tool({
      name: 'plain_throw',
      run: async () => {
        throw new TypeError("Cannot read properties of undefined (reading 'id')");
      },
    }),
    tool({
      name: 'sync_throw',
      run: () => {
        throw new Error('thrown before any promise');
      },
    }),
    tool({ name: 'not_json', run: async () => ({ big: 10n }) }),
    tool({ name: 'returns_nothing', run: async () => undefined }),
    tool({ name: 'returns_date', run: async () => ({ at: new Date('2024-01-02T03:04:05.000Z') }) }),
    tool({
      // waits until aborted and then rejects, like a fetch given the signal
      name: 'waits',
      run: (_args, ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error), { once: true });
        }),
    }),
    tool({
      // ignores its signal entirely and never settles
      name: 'hangs',
      run: () => new Promise(() => undefined),
    }),
  ],
});
