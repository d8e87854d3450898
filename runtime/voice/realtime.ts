/**
 * The provider adapter of voice sessions: the OpenAI Realtime API over a
 * WebSocket, opened with the official SDK's client (`openai/realtime/ws`,
 * which insists on `wss:`). Where it goes and with whose key is the LLM rule
 * (runtime/llm: the operator's LLM_BASE_URL with LLM_API_KEY, or an
 * organization's own llm_base_url with its own key); a tenant URL is judged by
 * the egress guard (literal addresses before connecting, names when they
 * resolve, the address pinned). TLS is always verified: `VOICE_PROVIDER_CA_FILE`
 * adds certificate authorities beside the system's, it never turns checks off.
 */
import { readFileSync } from 'node:fs';
import type { LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import type { RealtimeClientEvent, RealtimeServerEvent } from 'openai/resources/realtime/realtime';
import type { LlmEndpoint } from '../llm/index.js';

export type { RealtimeClientEvent, RealtimeServerEvent };

const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface RealtimeTarget {
  readonly endpoint: LlmEndpoint;
  readonly model: string;
  /** extra PEM certificate authorities (VOICE_PROVIDER_CA_FILE), trusted beside the system's */
  readonly caFile: string | null;
  /** the egress guard: used when the endpoint is an organization's own URL */
  readonly egress: { readonly lookup: LookupFunction; checkUrl(url: string | URL): unknown };
}

export interface RealtimeHandlers {
  /** the socket is open: the session can be configured */
  onOpen(): void;
  onEvent(event: RealtimeServerEvent): void;
  /** the connection failed or broke (after which onClose follows) */
  onError(message: string): void;
  onClose(): void;
}

export interface RealtimeConnection {
  send(event: RealtimeClientEvent): void;
  close(): void;
}

const caCache = new Map<string, string[]>();
const trustedAuthorities = (caFile: string): string[] => {
  let cached = caCache.get(caFile);
  if (cached === undefined) {
    cached = [...rootCertificates, readFileSync(caFile, 'utf8')];
    caCache.set(caFile, cached);
  }
  return cached;
};

/**
 * Opens the provider connection. Throws (before any socket) when the key is
 * missing or a tenant URL names a refused address; later failures come to `onError`.
 */
export function openRealtime(target: RealtimeTarget, handlers: RealtimeHandlers): RealtimeConnection {
  const { endpoint } = target;
  if (endpoint.apiKey === null || endpoint.apiKey.trim() === '') {
    throw new Error(endpoint.owner === 'operator' ? 'no LLM_API_KEY is configured' : "the organization's llm_base_url has no llm_api_key");
  }
  const baseUrl = endpoint.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
  const tenant = endpoint.owner === 'organization';
  if (tenant) {
    const refusal = target.egress.checkUrl(baseUrl);
    if (refusal !== null) throw new Error(`the organization's llm_base_url is refused by the egress guard`);
  }
  // every option explicit: the SDK reads nothing from the environment
  const client = new OpenAI({ apiKey: endpoint.apiKey, baseURL: baseUrl, organization: null, project: null, maxRetries: 0 });
  const realtime = new OpenAIRealtimeWS(
    {
      model: target.model,
      options: {
        ...(target.caFile === null ? {} : { ca: trustedAuthorities(target.caFile) }),
        ...(tenant ? { lookup: target.egress.lookup } : {}),
        // a provider redirect would carry the key elsewhere
        followRedirects: false,
        handshakeTimeout: 15_000,
      },
    },
    client,
  );
  let closed = false;
  realtime.socket.on('open', () => handlers.onOpen());
  realtime.on('event', (event) => handlers.onEvent(event));
  // the SDK turns socket errors and `error` events into this; the `error` event also reaches onEvent
  realtime.on('error', (error) => {
    if (error.error === undefined) handlers.onError(error.message);
  });
  realtime.socket.on('close', () => {
    closed = true;
    handlers.onClose();
  });
  return {
    send: (event) => {
      if (!closed && realtime.socket.readyState === realtime.socket.OPEN) realtime.send(event);
    },
    close: () => {
      if (closed) return;
      closed = true;
      if (realtime.socket.readyState === realtime.socket.CONNECTING) realtime.socket.terminate();
      else realtime.close({ code: 1000, reason: 'session ended' });
    },
  };
}
