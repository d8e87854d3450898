import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../runtime/config.js';

const tempDir = (): string => mkdtempSync(join(tmpdir(), 'cfg-'));
const SECRET = 'x'.repeat(40);

describe('configuration', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({ DATA_DIR: tempDir(), JWT_SECRET: SECRET });
    expect(config.host).toBe('127.0.0.1');
    expect(config.port).toBe(8080);
    expect(config.auth.provider).toBe('local');
    expect(config.webhookMaxBodyBytes).toBe(1_048_576);
    expect(config.webhookRetentionDays).toBe(30);
    expect(config.contextIngestMaxBytes).toBe(8_000_000);
    expect(config.workerLeaseTtlSeconds).toBe(300);
    expect(config.features).toEqual({ rag: false, workers: false, orchestrator: false, voice: false, policies: false });
    expect(config.mongodbUrl).toBeNull();
    // no operator endpoint: each provider's official API
    expect([config.llmBaseUrl, config.llmApiKey]).toEqual([null, null]);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads feature flags and limits', () => {
    const config = loadConfig({
      DATA_DIR: tempDir(),
      JWT_SECRET: SECRET,
      SERVICE_FEATURES_WORKERS: 'true',
      SERVICE_FEATURES_ORCHESTRATOR: '1',
      WEBHOOK_MAX_BODY_BYTES: '2048',
      CONTEXT_INGEST_MAX_BYTES: '4096',
      WORKER_LEASE_TTL: '30',
      WEBHOOK_RETENTION_DAYS: '7',
    });
    expect(config.features.workers).toBe(true);
    expect(config.features.orchestrator).toBe(true);
    expect(config.features.voice).toBe(false);
    expect([config.webhookMaxBodyBytes, config.contextIngestMaxBytes, config.workerLeaseTtlSeconds, config.webhookRetentionDays]).toEqual([2048, 4096, 30, 7]);
  });

  it.each([
    ['PORT', 'eighty', 'PORT: must be an integer'],
    ['PORT', '70000', 'PORT: must be between 0 and 65535'],
    ['WEBHOOK_MAX_BODY_BYTES', '0', 'WEBHOOK_MAX_BODY_BYTES: must be between'],
    ['SERVICE_FEATURES_RAG', 'maybe', 'SERVICE_FEATURES_RAG: must be true or false'],
    ['AUTH_PROVIDER', 'ldap', 'AUTH_PROVIDER: must be "local" or "oidc"'],
    ['MONGODB_URL', 'http://db', 'MONGODB_URL: must use mongodb: or mongodb+srv:'],
    ['NATS_URL', 'not a url', 'NATS_URL: is not a valid URL'],
    ['LLM_BASE_URL', 'not a url', 'LLM_BASE_URL: is not a valid URL'],
    ['LLM_BASE_URL', 'ftp://llm.internal/v1', 'LLM_BASE_URL: must use http: or https:'],
    ['GRAPH_URL', 'http://graph', 'GRAPH_URL: must use bolt:'],
    ['JWT_SECRET', 'short', 'JWT_SECRET: must be at least 32 characters'],
    ['WORKER_TOKEN', 'tiny', 'WORKER_TOKEN: must be at least 16 characters'],
    ['LOG_LEVEL', 'loud', 'LOG_LEVEL: unknown level'],
  ])('rejects %s=%s with a message naming the variable', (name, value, message) => {
    const env = { DATA_DIR: tempDir(), JWT_SECRET: SECRET, [name]: value };
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it("reads the operator's LLM endpoint and key", () => {
    const config = loadConfig({ DATA_DIR: tempDir(), JWT_SECRET: SECRET, LLM_BASE_URL: ' https://llm-proxy.internal/v1 ', LLM_API_KEY: 'operator-key' });
    expect([config.llmBaseUrl, config.llmApiKey]).toEqual(['https://llm-proxy.internal/v1', 'operator-key']);
  });

  it('requires the OIDC settings together', () => {
    expect(() => loadConfig({ DATA_DIR: tempDir(), JWT_SECRET: SECRET, AUTH_PROVIDER: 'oidc' })).toThrow('JWKS_URL: is required');
    expect(() =>
      loadConfig({ DATA_DIR: tempDir(), JWT_SECRET: SECRET, AUTH_PROVIDER: 'oidc', JWKS_URL: 'http://127.0.0.1:1/jwks', JWT_ISSUER: 'https://idp' }),
    ).toThrow('JWT_AUDIENCE: is required');
  });

  it('generates a development secret once and keeps it in DATA_DIR', () => {
    const dir = tempDir();
    const first = loadConfig({ DATA_DIR: dir });
    const second = loadConfig({ DATA_DIR: dir });
    expect(first.auth.jwtSecretFile).toBe(join(dir, 'jwt-secret'));
    expect(Buffer.from(first.auth.jwtSecret).toString()).toBe(readFileSync(join(dir, 'jwt-secret'), 'utf8').trim());
    expect(Buffer.from(second.auth.jwtSecret).equals(Buffer.from(first.auth.jwtSecret))).toBe(true);
    expect(statSync(join(dir, 'jwt-secret')).mode & 0o777).toBe(0o600);
  });

  it('refuses to start in production without JWT_SECRET', () => {
    expect(() => loadConfig({ DATA_DIR: tempDir(), NODE_ENV: 'production' })).toThrow('JWT_SECRET: is required when NODE_ENV=production');
  });
});
