/**
 * One MCP client session for a source's config: a stdio command (spawned
 * for the session, killed at close) or a streamable HTTP URL. Sessions are
 * short: opened for a listing or a call and closed right after, so a
 * source holds no process or connection between runs.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { basename } from 'node:path';
import { ToolError, type NetPort } from '../contract.js';

export type McpConfig =
  | {
      readonly transport: 'stdio';
      readonly command: string;
      readonly args: readonly string[];
      readonly env: Readonly<Record<string, string>>;
      readonly cwd?: string;
    }
  | { readonly transport: 'http'; readonly url: string; readonly headers: Readonly<Record<string, string>> };

export interface McpSessionOptions {
  /** MCP_STDIO_COMMANDS: commands a stdio source may start; `*` = any, empty = none */
  readonly stdioCommands: readonly string[];
}

const CLIENT_INFO = { name: 'agent-context-service', version: '1.0.0' };

/** Refuses a stdio command the operator did not allow: a source must not run arbitrary programs on the server. */
function stdioRefusal(config: McpConfig, options: McpSessionOptions): string | null {
  if (config.transport !== 'stdio') return null;
  const allowed = options.stdioCommands;
  if (allowed.includes('*') || allowed.includes(config.command) || allowed.includes(basename(config.command))) return null;
  return allowed.length === 0
    ? 'stdio MCP servers are disabled on this service (the operator allows commands with MCP_STDIO_COMMANDS)'
    : `command "${config.command}" is not in MCP_STDIO_COMMANDS (${allowed.join(', ')})`;
}

function transportOf(config: McpConfig, net: NetPort | undefined): Transport {
  if (config.transport === 'stdio') {
    return new StdioClientTransport({
      command: config.command,
      args: [...config.args],
      env: { ...getDefaultEnvironment(), ...config.env },
      ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
      // the server's own logging must not land in ours
      stderr: 'ignore',
    });
  }
  // the egress guard's fetch: the URL is the tenant's, and redirects are judged hop by hop
  return new StreamableHTTPClientTransport(new URL(config.url), {
    requestInit: { headers: { ...config.headers } },
    ...(net === undefined ? {} : { fetch: net.fetch }),
  });
}

/** Opens a session, runs `work`, closes the session whatever happens. */
export async function withSession<T>(
  config: McpConfig,
  options: McpSessionOptions,
  signal: AbortSignal,
  net: NetPort | undefined,
  work: (client: Client) => Promise<T>,
): Promise<T> {
  signal.throwIfAborted();
  const refusal = stdioRefusal(config, options);
  if (refusal !== null) throw new ToolError('mcp_command_not_allowed', refusal);
  const client = new Client(CLIENT_INFO);
  try {
    try {
      await client.connect(transportOf(config, net), { signal });
    } catch (error) {
      if (signal.aborted) throw error;
      const refused = ToolError.within(error); // the egress guard's refusal keeps its code, `egress_refused`
      if (refused !== null) throw refused;
      throw new ToolError('mcp_unreachable', `cannot connect to the MCP server: ${(error as Error).message}`);
    }
    return await work(client);
  } finally {
    await client.close().catch(() => undefined);
  }
}
