/**
 * What the conformance command runs against this plugin: a config validate()
 * must accept, one it must refuse, and a sample call for every tool. A
 * function may start a fake of the system first and return `teardown`.
 */
import type { ConformanceConfig } from '../conformance/cli-config.js';
import { FAKE_TOKEN, startFakeNotesApi } from './fake-notes-api.js';

const config: ConformanceConfig = async () => {
  const fake = await startFakeNotesApi();
  return {
    validConfig: { base_url: fake.url, token: FAKE_TOKEN, workspace: 'ops' },
    invalidConfig: { base_url: fake.url, token: 'wrong', workspace: 'ops' },
    toolCalls: [
      { tool: 'list_notes', args: { query: 'Runbook' }, expect: { result: { notes: [{ id: 'n1', title: 'Runbook: deploys', updated_at: '2026-11-01T00:00:00Z' }] } } },
      { tool: 'create_note', args: { title: 'Postmortem' }, expect: { result: { id: 'n2', title: 'Postmortem' } } },
    ],
    teardown: () => fake.close(),
  };
};

export default config;
