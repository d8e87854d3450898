/**
 * The fake MCP server over streamable HTTP (stateless, the SDK's Node
 * transport), behind a bearer token like a hosted MCP server.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createFakeMcpServer, type RecordedCall } from './tools.js';

/** the stdio entry point; start it as `node --import tsx <script>` */
export const FAKE_MCP_STDIO_SCRIPT = new URL('./stdio-server.ts', import.meta.url).pathname;

export interface FakeMcpHttp {
  /** the MCP endpoint, `<base>/mcp` */
  readonly url: string;
  readonly token: string;
  /** every tools/call, in order */
  readonly calls: RecordedCall[];
  close(): Promise<void>;
}

export async function startFakeMcpHttp(token = 'mcp-secret'): Promise<FakeMcpHttp> {
  const calls: RecordedCall[] = [];
  const server: Server = createServer((request, response) => {
    if (request.headers.authorization !== `Bearer ${token}`) {
      response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_token' }));
      return;
    }
    const mcp = createFakeMcpServer(calls);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    void mcp.connect(transport).then(() => transport.handleRequest(request, response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    token,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
