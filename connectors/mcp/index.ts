/**
 * The MCP bridge: a source of kind `mcp` is any Model Context Protocol
 * server, reached by a stdio command or a streamable HTTP URL. Its tools are
 * listed per source (`listTools`, cached by domains/sources) and appear in
 * the catalog as `<source name>.<tool>` with the server's input schemas.
 */
import { ToolError, type ConnectorPlugin, type JsonSchema } from '../contract.js';
import { withSession, type McpConfig, type McpSessionOptions } from './session.js';
import { connectorToolOf, listServerTools } from './tools.js';

const stringMap: JsonSchema = { type: 'object', additionalProperties: { type: 'string' }, default: {} };

const MCP_CONFIG_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    transport: { enum: ['stdio', 'http'], description: '`stdio`: the service starts `command`; `http`: a streamable HTTP endpoint at `url`' },
    command: { type: 'string', minLength: 1, description: 'stdio: the program to run (must be allowed by MCP_STDIO_COMMANDS)' },
    args: { type: 'array', items: { type: 'string' }, default: [] },
    env: { ...stringMap, writeOnly: true, description: 'stdio: environment variables for the server (often its credentials; masked on read)' },
    cwd: { type: 'string' },
    url: { type: 'string', format: 'uri', description: 'http: the MCP endpoint, e.g. https://mcp.example.com/mcp' },
    headers: { ...stringMap, writeOnly: true, description: 'http: request headers, e.g. {"authorization": "Bearer ..."} (masked on read)' },
  },
  required: ['transport'],
  additionalProperties: false,
  allOf: [
    { if: { properties: { transport: { const: 'stdio' } } }, then: { required: ['command'] } },
    { if: { properties: { transport: { const: 'http' } } }, then: { required: ['url'] } },
  ],
};

export function createMcpPlugin(options: McpSessionOptions): ConnectorPlugin {
  return {
    kind: 'mcp',
    version: '1.0.0',
    contract: '^1',
    description: 'Any Model Context Protocol server (stdio command or streamable HTTP URL); its tools appear as <source>.<tool>.',
    configSchema: MCP_CONFIG_SCHEMA,
    tools: [],
    async validate(config, signal, net) {
      try {
        const tools = await withSession(config as unknown as McpConfig, options, signal, net, (client) => listServerTools(client, signal));
        return { ok: true, details: { tools: tools.length } };
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        const refused = ToolError.within(error);
        return {
          ok: false,
          message: (error as Error).message,
          details: { reason: typeof code === 'string' ? code : 'mcp_error', ...(refused?.code === 'egress_refused' ? refused.details : {}) },
        };
      }
    },
    async listTools(config, signal, net) {
      const tools = await withSession(config as unknown as McpConfig, options, signal, net, (client) => listServerTools(client, signal));
      return tools.map((tool) => connectorToolOf(tool, options));
    },
  };
}
