/**
 * The service as an MCP server: streamable HTTP at `/mcp` (stateless, JSON
 * responses), bearer auth with an API key or a JWT, exposing the catalog
 * meta-tools over the caller's sources (an API key scoped to `source_ids`
 * sees only those). Writes need a person's approval: `/mcp/approvals`.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { z } from 'zod';
import { createCatalog, type ToolCatalog, type ToolSummary } from '../../runtime/tools/catalog.js';
import type { OrgId } from '../../runtime/store/types.js';
import { createCatalogMcpServer, type WriteGate } from '../../runtime/tools/mcp-server.js';
import type { PolicyGate, PolicySubject } from '../../domains/policies/gate.js';
import { ServiceError } from '../../runtime/errors.js';
import type { McpApprovalDoc } from '../../domains/sources/types.js';
import { DEFAULT_REALM } from '../../runtime/graph/names.js';
import type { HttpResponse } from '../http.js';
import { idParams, storedSchema } from '../resource.js';
import { route, type AnyRoute } from '../route.js';
import type { Services } from '../services.js';

/** MCP messages are small; a batch of calls stays well under this */
const MCP_MAX_BODY_BYTES = 4 * 1_048_576;
const SERVER_INFO = { name: 'agent-context-service', version: '1.0.0' };

const approvalSchema = z.object({
  ...storedSchema,
  tool: z.string(),
  source_id: z.string().nullable(),
  args: z.record(z.string(), z.unknown()),
  status: z.enum(['pending', 'approved', 'denied', 'used']),
  requested_by: z.string(),
  api_key_id: z.string().nullable(),
  decided_by: z.string().nullable(),
  decided_at: z.string().nullable(),
  expires_at: z.string(),
});

/** a JSON-RPC 2.0 message (MCP's own schema is the protocol's: https://modelcontextprotocol.io) */
const jsonRpc = z.looseObject({ jsonrpc: z.literal('2.0'), id: z.union([z.string(), z.number(), z.null()]).optional() });
/** answers of the MCP transport: a message or a batch; its protocol errors (400, 406, 415) are JSON-RPC errors too */
const mcpAnswer = z.union([jsonRpc, z.array(jsonRpc)]);

const presentApproval = (approval: McpApprovalDoc) => ({
  id: approval.id,
  tool: approval.tool,
  source_id: approval.source_id,
  args: approval.args,
  status: approval.status,
  requested_by: approval.requested_by,
  api_key_id: approval.api_key_id,
  decided_by: approval.decided_by,
  decided_at: approval.decided_at,
  expires_at: approval.expires_at,
  created_at: approval.created_at,
  updated_at: approval.updated_at,
});

/** with the feature on, policies decide a write before anybody is asked to approve it */
function policyFirst(policies: PolicyGate, gate: WriteGate, orgId: string, subject: PolicySubject): WriteGate {
  return {
    check: async (call, approvalId) => {
      const denied = await policies.precheck({ name: call.tool.name, connector: call.tool.connector, effect: call.effect, args: call.args, orgId }, subject);
      return denied ? { kind: 'answer', outcome: denied } : gate.check(call, approvalId);
    },
  };
}

/** the catalog without the tools the policies deny whatever the arguments (search and listing) */
async function withoutDeniedTools(policies: PolicyGate, catalog: ToolCatalog, orgId: string, subject: PolicySubject): Promise<ToolCatalog> {
  const keyOf = (tool: ToolSummary): string => `${tool.name}\u0000${tool.source_id ?? ''}`;
  const hidden = new Set<string>();
  for (const tool of catalog.entries()) {
    if (await policies.hides(orgId as OrgId, tool, subject)) hidden.add(keyOf(tool));
  }
  if (hidden.size === 0) return catalog;
  const entries = catalog.entries().filter((tool) => !hidden.has(keyOf(tool)));
  return {
    ...catalog,
    entries: () => entries,
    search: (query, limit) =>
      catalog
        .search(query, 100)
        .filter((tool) => !hidden.has(keyOf(tool)))
        .slice(0, Math.min(Math.max(Math.trunc(limit ?? 10) || 10, 1), 100)),
  };
}

export function mcpRoutes({ sources, sourceService, config, policies, mcpApprovals: approvals }: Services): AnyRoute[] {
  return [
    route({
      method: 'POST',
      path: '/mcp',
      tag: 'mcp',
      auth: 'bearer',
      permission: 'chat:use',
      bodyKind: 'raw',
      maxBodyBytes: MCP_MAX_BODY_BYTES,
      // a protocol endpoint: its tool calls are decided (and denials audited) by the policy gate
      audit: false,
      summary: 'MCP streamable HTTP endpoint (stateless): search_connector_tools and execute_connector_tool over your sources',
      response: mcpAnswer,
      responses: { 400: mcpAnswer, 406: mcpAnswer, 415: mcpAnswer },
      handler: async ({ auth, request }) => {
        const subject: PolicySubject = { user: auth.userId };
        const full = createCatalog(sourceService.registry, {
          sources: await sources.catalogSources(auth.orgId, auth.sourceIds),
          outsideRun: true,
          interceptors: policies.enabled ? [policies.interceptor(subject)] : [],
        });
        const catalog = policies.enabled ? await withoutDeniedTools(policies, full, auth.orgId, subject) : full;
        const writeGate = approvals.gateFor({ orgId: auth.orgId, userId: auth.userId, apiKeyId: auth.apiKeyId });
        const server = createCatalogMcpServer({
          catalog,
          context: { orgId: auth.orgId, signal: AbortSignal.timeout(config.agentRunTimeoutSecs * 1000), actorId: auth.userId, realm: DEFAULT_REALM },
          writeGate: policies.enabled ? policyFirst(policies, writeGate, auth.orgId, subject) : writeGate,
          serverInfo: SERVER_INFO,
        });
        const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        await server.connect(transport);
        try {
          const answer = await transport.handleRequest(
            new Request(`http://${request.headers['host'] ?? 'localhost'}${request.path}`, {
              method: 'POST',
              headers: request.headers,
              body: new Uint8Array(request.body),
            }),
          );
          const response: HttpResponse = {
            status: answer.status,
            headers: Object.fromEntries(answer.headers.entries()),
            body: Buffer.from(await answer.arrayBuffer()),
          };
          return response;
        } finally {
          await server.close();
        }
      },
    }),
    route({
      method: 'GET',
      path: '/mcp/approvals',
      tag: 'mcp',
      auth: 'bearer',
      permission: 'chat:use',
      summary: 'Writes asked for through /mcp, with their decisions (filter by status)',
      query: z.object({ status: z.enum(['pending', 'approved', 'denied', 'used']).optional() }),
      response: z.object({ items: z.array(approvalSchema) }),
      handler: async ({ auth, query }) => ({ status: 200, json: { items: (await approvals.list(auth.orgId, query.status)).map(presentApproval) } }),
    }),
    route({
      method: 'POST',
      path: '/mcp/approvals/:id',
      tag: 'mcp',
      auth: 'bearer',
      permission: 'chat:use',
      audit: { action: 'decide' },
      summary: 'Approve or deny a write asked for through /mcp (a person only: an API key cannot approve)',
      params: idParams,
      body: z.strictObject({ approved: z.boolean() }),
      response: approvalSchema,
      handler: async ({ auth, params, body }) => {
        if (auth.kind !== 'user') throw new ServiceError('forbidden', 'approvals are answered by a person signed in, not by an API key');
        return { status: 200, json: presentApproval(await approvals.decide(auth.orgId, params.id, body.approved, auth.userId)) };
      },
    }),
  ];
}
