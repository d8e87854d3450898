/** Seed data for the github fake shared by the github suites, and a GraphSink that records what a sync writes. */
import type { GraphNodeInput, GraphRelationshipInput, GraphSink } from '../../connectors/contract.js';
import type { FakeGithub } from '../fakes/github/server.js';

export const GOOD_TOKEN = 'ghp_good_token_0001';
export const NARROW_TOKEN = 'ghp_narrow_token_0002';
export const FINE_GRAINED_TOKEN = 'github_pat_fine_0003';

const daysAgo = (days: number): string => new Date(Date.now() - days * 86_400_000).toISOString();

/** acme/api: 250 open pull requests (3 pages of 100), 3 of them stale; commits by two people; failed runs; issues mixed with a PR. */
export function seedGithub(fake: FakeGithub): void {
  fake.tokens.set(GOOD_TOKEN, { login: 'octo-admin', scopes: 'repo, read:org, workflow' });
  fake.tokens.set(NARROW_TOKEN, { login: 'octo-narrow', scopes: 'public_repo, gist' });
  fake.tokens.set(FINE_GRAINED_TOKEN, { login: 'octo-fine' });
  fake.orgs.add('acme');
  fake.repos.push({ owner: 'acme', name: 'api', private: true }, { owner: 'acme', name: 'web', language: 'JavaScript' }, { owner: 'solo', name: 'dotfiles', ownerType: 'User' });
  fake.pulls.set('acme/api', [
    ...Array.from({ length: 247 }, (_, index) => ({
      number: 1000 + index,
      title: `fresh change ${index}`,
      user: index % 2 === 0 ? 'alice' : 'bob',
      created_at: daysAgo(3),
      updated_at: daysAgo(1 + (index % 3) / 10),
    })),
    { number: 7, title: 'forgotten refactor', user: 'carol', created_at: daysAgo(60), updated_at: daysAgo(40), labels: ['refactor'] },
    { number: 8, title: 'draft idea', user: 'alice', draft: true, created_at: daysAgo(30), updated_at: daysAgo(20) },
    { number: 9, title: 'waiting for review', user: 'bob', created_at: daysAgo(20), updated_at: daysAgo(15) },
    { number: 5, title: 'merged long ago', user: 'bob', state: 'closed', created_at: daysAgo(90), updated_at: daysAgo(80) },
  ]);
  fake.pulls.set('acme/web', [{ number: 1, title: 'landing page', user: 'dave', created_at: daysAgo(2), updated_at: daysAgo(1) }]);
  fake.commits.set('acme/api', [
    { sha: 'a1', message: 'fix login\n\nlonger body', login: 'alice', name: 'Alice A', date: '2026-11-20T09:00:00Z' },
    { sha: 'a2', message: 'add metrics', login: 'alice', name: 'Alice A', date: '2026-11-19T09:00:00Z' },
    { sha: 'b1', message: 'bump deps', login: 'bob', name: 'Bob B', date: '2026-11-18T09:00:00Z' },
    { sha: 'x1', message: 'hotfix from laptop', login: null, name: 'Eve Unlinked', date: '2026-11-17T09:00:00Z' },
    { sha: 'a3', message: 'old work', login: 'alice', name: 'Alice A', date: '2026-10-01T09:00:00Z' },
  ]);
  fake.commits.set('acme/web', [{ sha: 'd1', message: 'hero image', login: 'dave', name: 'Dave D', date: '2026-11-20T08:00:00Z' }]);
  // solo/dotfiles stays empty: its commits answer 409 like an empty repository
  fake.issues.set('acme/api', [
    { number: 11, title: 'login broken on Safari', user: 'carol', labels: ['bug', 'p1'], assignees: ['alice'], comments: 3, created_at: daysAgo(5), updated_at: daysAgo(1) },
    { number: 12, title: 'dark mode', user: 'dave', labels: ['feature'], created_at: daysAgo(10), updated_at: daysAgo(2) },
    { number: 9, title: 'waiting for review', user: 'bob', isPullRequest: true, created_at: daysAgo(20), updated_at: daysAgo(0.5) },
    { number: 13, title: 'old crash', user: 'bob', state: 'closed', labels: ['bug'], created_at: daysAgo(50), updated_at: daysAgo(40) },
  ]);
  fake.runs.set('acme/api', [
    { id: 501, name: 'CI', head_branch: 'main', head_sha: 'a1', event: 'push', status: 'completed', conclusion: 'failure', actor: 'alice', created_at: '2026-11-20T09:05:00Z' },
    { id: 502, name: 'CI', head_branch: 'main', head_sha: 'a2', event: 'push', status: 'completed', conclusion: 'success', actor: 'alice', created_at: '2026-11-19T09:05:00Z' },
    { id: 503, name: 'Deploy', head_branch: 'release', head_sha: 'b1', event: 'workflow_dispatch', status: 'completed', conclusion: 'failure', actor: 'bob', created_at: '2026-11-18T09:05:00Z' },
    { id: 504, name: 'CI', head_branch: 'feature-x', head_sha: 'b1', event: 'pull_request', status: 'in_progress', conclusion: null, actor: 'bob', created_at: '2026-11-21T09:05:00Z' },
  ]);
}

/** A GraphSink that records every write (a port stand-in, not code under test). */
export class RecordingGraphSink implements GraphSink {
  readonly nodes = new Map<string, GraphNodeInput>();
  readonly relationships = new Map<string, GraphRelationshipInput>();
  calls = 0;

  upsertNodes(nodes: readonly GraphNodeInput[]): Promise<void> {
    this.calls += 1;
    for (const node of nodes) this.nodes.set(`${node.label}:${node.properties._key}`, node);
    return Promise.resolve();
  }

  upsertRelationships(relationships: readonly GraphRelationshipInput[]): Promise<void> {
    this.calls += 1;
    for (const rel of relationships) this.relationships.set(`${rel.from_label}:${rel.from_key}-[${rel.type}]->${rel.to_label}:${rel.to_key}`, rel);
    return Promise.resolve();
  }

  keysOf(label: string): string[] {
    return [...this.nodes.values()].filter((node) => node.label === label).map((node) => node.properties._key).sort();
  }

  edges(type: string): string[] {
    return [...this.relationships.entries()].filter(([, rel]) => rel.type === type).map(([key]) => key).sort();
  }
}
