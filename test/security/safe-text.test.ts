/**
 * Names, titles and labels refuse NUL, lone UTF-16 surrogates and control
 * characters (gateway/safe-text.ts), on every route that takes one, with a
 * 400 `validation_error` naming the field; an emoji (an astral character
 * written as a proper surrogate pair) is accepted where the field is free text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneOrg } from '../helpers/orgs.js';
import type { ApiResponse, Session, TestServer } from '../helpers/server.js';

let server: TestServer;
let owner: Session;
let seq = 0;

beforeAll(async () => ({ server, owner } = await oneOrg({}, { name: 'Safe Text' })));
afterAll(async () => {
  await server?.stop();
});

const REFUSED: [string, string][] = [
  ['a NUL alone', '\u0000'],
  ['a NUL inside', 'a\u0000b'],
  ['a lone high surrogate', '\ud800'],
  ['a lone low surrogate', '\udfff'],
  ['a lone high surrogate after text', 'name\ud83d'],
  ['two surrogates in the wrong order', 'x\udc00\ud800y'],
  ['a bell', 'a\u0007b'],
  ['an escape', 'a\u001b[31mred'],
  ['a DEL', 'a\u007fb'],
  ['a C1 control', 'a\u0085b'],
];

interface Target {
  readonly label: string;
  /** the issue path the refusal names */
  readonly field: string;
  /** false where the field is a slug by design (letters, digits, a few signs) */
  readonly freeText: boolean;
  readonly send: (value: string) => Promise<ApiResponse>;
}

const unique = (value: string): string => `${value} ${++seq}`;
const post = (path: string, body: unknown) => server.request('POST', path, { token: owner.token, body });
const patchOf = (path: string, body: unknown) => server.request('PATCH', path, { token: owner.token, body });

/** creates one resource to patch */
async function createdId(path: string, body: unknown): Promise<string> {
  const answer = await post(path, body);
  if (answer.status !== 201) throw new Error(`setup ${path}: ${answer.status} ${answer.text}`);
  return answer.body.id as string;
}

const targets = async (): Promise<Target[]> => {
  const agentId = await createdId('/agents', { agent_type: 'assistant', name: 'patched agent' });
  const taskId = await createdId('/tasks', { name: 'patched task', trigger: { kind: 'schedule', cron: '0 6 * * *' }, enabled: false });
  const realmId = await createdId('/realms', { name: 'patched-realm' });
  const channelId = await createdId('/channels', { channel_type: 'slack', display_name: 'patched channel' });
  const sourceId = await createdId('/sources', { name: 'patched source', connector: 'github', config: { auth: { kind: 'pat', token: 't' } } });
  return [
    { label: 'PATCH /settings organization_name', field: 'organization_name', freeText: true, send: (v) => patchOf('/settings', { organization_name: v }) },
    {
      label: 'POST /auth/register organization_name',
      field: 'organization_name',
      freeText: true,
      send: (v) =>
        server.request('POST', '/auth/register', { body: { email: `r${++seq}@example.test`, password: 'a long password 1234', organization_name: v } }),
    },
    { label: 'POST /platform/organizations name', field: 'name', freeText: true, send: (v) => post('/platform/organizations', { name: unique(v) }) },
    { label: 'POST /realms name', field: 'name', freeText: false, send: (v) => post('/realms', { name: v }) },
    { label: 'POST /realms display_name', field: 'display_name', freeText: true, send: (v) => post('/realms', { name: `realm-${++seq}`, display_name: v }) },
    { label: 'PATCH /realms display_name', field: 'display_name', freeText: true, send: (v) => patchOf(`/realms/${realmId}`, { display_name: v }) },
    { label: 'POST /agents name', field: 'name', freeText: true, send: (v) => post('/agents', { agent_type: 'assistant', name: unique(v) }) },
    { label: 'PATCH /agents name', field: 'name', freeText: true, send: (v) => patchOf(`/agents/${agentId}`, { name: unique(v) }) },
    {
      label: 'POST /tasks name',
      field: 'name',
      freeText: true,
      send: (v) => post('/tasks', { name: unique(v), trigger: { kind: 'schedule', cron: '0 6 * * *' }, enabled: false }),
    },
    { label: 'PATCH /tasks name', field: 'name', freeText: true, send: (v) => patchOf(`/tasks/${taskId}`, { name: unique(v) }) },
    {
      label: 'POST /sources name',
      field: 'name',
      freeText: true,
      send: (v) => post('/sources', { name: unique(v), connector: 'github', config: { auth: { kind: 'pat', token: 't' } } }),
    },
    { label: 'PATCH /sources name', field: 'name', freeText: true, send: (v) => patchOf(`/sources/${sourceId}`, { name: unique(v) }) },
    { label: 'POST /channels display_name', field: 'display_name', freeText: true, send: (v) => post('/channels', { channel_type: 'slack', display_name: v }) },
    { label: 'PATCH /channels display_name', field: 'display_name', freeText: true, send: (v) => patchOf(`/channels/${channelId}`, { display_name: v }) },
    { label: 'POST /webhooks name', field: 'name', freeText: false, send: (v) => post('/webhooks', { name: v, url: 'https://hooks.example.test/in' }) },
    { label: 'POST /roles name', field: 'name', freeText: false, send: (v) => post('/roles', { name: v, permissions: ['task:read'] }) },
    {
      label: 'POST /roles description',
      field: 'description',
      freeText: true,
      send: (v) => post('/roles', { name: `role-${++seq}`, description: v, permissions: ['task:read'] }),
    },
    { label: 'POST /skills name', field: 'name', freeText: true, send: (v) => post('/skills', { name: unique(v), slug: `skill-${++seq}` }) },
    { label: 'POST /api-keys name', field: 'name', freeText: true, send: (v) => post('/api-keys', { name: v, permissions: ['task:read'] }) },
    { label: 'POST /chat/conversations title', field: 'title', freeText: true, send: (v) => post('/chat/conversations', { title: v }) },
    { label: 'POST /memory title', field: 'title', freeText: true, send: (v) => post('/memory', { kind: 'note', text: 'remember this', title: v }) },
    { label: 'POST /memory tags', field: 'tags.1', freeText: true, send: (v) => post('/memory', { kind: 'note', text: 'tagged', tags: ['ok', v] }) },
    {
      label: 'POST /skills tags',
      field: 'tags.0',
      freeText: true,
      send: (v) => post('/skills', { name: unique('tagged'), slug: `skill-${++seq}`, tags: [v] }),
    },
    { label: 'POST /inbound-webhooks name', field: 'name', freeText: true, send: (v) => post('/inbound-webhooks', { name: unique(v) }) },
  ];
};

describe('names refuse NUL, lone surrogates and control characters', () => {
  let all: Target[];
  beforeAll(async () => {
    all = await targets();
  });

  it('every route answers 400 validation_error naming the field, for every refused value', async () => {
    for (const target of all) {
      for (const [what, value] of REFUSED) {
        const response = await target.send(value);
        const label = `${target.label} with ${what}`;
        expect(response.status, `${label}: ${response.text}`).toBe(400);
        expect(response.body.error.code, label).toBe('validation_error');
        const paths = (response.body.error.details.issues as { path: string }[]).map((issue) => issue.path);
        expect(paths, label).toContain(target.field);
      }
    }
  });

  it('the refusal says why', async () => {
    const [settings] = all;
    expect((await settings!.send('a\u0000b')).body.error.message).toContain('NUL');
    expect((await settings!.send('\ud800')).body.error.message).toContain('surrogate');
    expect((await settings!.send('a\u0007b')).body.error.message).toContain('control');
  });

  it('free-text names accept an emoji, other scripts and a tab, and store them as sent', async () => {
    for (const target of all.filter((candidate) => candidate.freeText)) {
      for (const value of ['Deploy 🚀', '日本語 名前', 'tab\tseparated', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢']) {
        const response = await target.send(value);
        expect([200, 201], `${target.label} with ${JSON.stringify(value)}: ${response.text}`).toContain(response.status);
      }
    }
    const read = await server.request('GET', '/settings', { token: owner.token });
    expect(read.body.organization_name).toBe('𝔘𝔫𝔦𝔠𝔬𝔡𝔢');
  });
});
