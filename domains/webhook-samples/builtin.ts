/**
 * Built-in webhook samples: what common senders really POST, to fire a task
 * with before wiring the sender.
 *
 * - Code host push and pull request opened: the community examples GitHub's
 *   own webhooks schema is tested with (`@octokit/webhooks-examples`), with
 *   the `X-GitHub-Event` header GitHub sends.
 * - Build failure: the JSON the Jenkins Notification plugin POSTs
 *   (`name`, `url`, `build` with `phase`, `status`, `full_url`, `scm`, ...)
 *   at the COMPLETED phase of a failed build.
 * - Deployment failure: Vercel's `deployment.error` webhook (event `id`,
 *   `type`, `createdAt` in ms, `payload` with `deployment`, `links`,
 *   `project`, `target`, and the git metadata Vercel puts in `deployment.meta`).
 */
import { createRequire } from 'node:module';

export interface WebhookSample {
  readonly name: string;
  readonly description: string;
  readonly body: Record<string, unknown>;
  /** headers the sender sends with it (lowercased), handed to the task as `trigger.headers` */
  readonly headers: Readonly<Record<string, string>>;
}

interface OctokitDefinition {
  readonly name: string;
  readonly examples: Record<string, unknown>[];
}

const require = createRequire(import.meta.url);

function octokitExample(event: string, matches: (example: Record<string, unknown>) => boolean): Record<string, unknown> {
  const definitions = require('@octokit/webhooks-examples') as OctokitDefinition[];
  const example = definitions.find((definition) => definition.name === event)?.examples.find(matches);
  if (!example) throw new Error(`@octokit/webhooks-examples has no matching ${event} example`);
  return structuredClone(example);
}

const JENKINS_BUILD_FAILED: Record<string, unknown> = {
  name: 'payments-api',
  url: 'job/payments-api/',
  build: {
    full_url: 'https://ci.example.com/job/payments-api/1287/',
    number: 1287,
    queue_id: 5521,
    timestamp: 1763798400000,
    duration: 251_000,
    phase: 'COMPLETED',
    status: 'FAILURE',
    url: 'job/payments-api/1287/',
    scm: {
      url: 'https://github.com/Codertocat/Hello-World.git',
      branch: 'origin/main',
      commit: '6113728f27ae82c7b1a177c8d03f9e96e0adf246',
      changes: ['src/payments/refund.ts'],
      culprits: ['Codertocat'],
    },
    parameters: { DEPLOY_ENV: 'staging' },
    log: "[ERROR] Tests run: 412, Failures: 3, Errors: 0, Skipped: 2\n[ERROR] RefundServiceTest.refundsPartialAmount:88 expected <40.00> but was <39.99>\nBuild step 'Invoke top-level Maven targets' marked build as failure\nFinished: FAILURE",
    notes: '',
    artifacts: {},
  },
};

const VERCEL_DEPLOYMENT_ERROR: Record<string, unknown> = {
  id: 'uDdS4oBUgasldYQ8Jyv3T7GM',
  type: 'deployment.error',
  createdAt: 1763798400000,
  region: 'iad1',
  payload: {
    team: { id: 'team_8KwRkNBF7bAkRu9MV5lbUBiW' },
    user: { id: 'b1aE2WhjrbcHNQ6G5HcOUF0a' },
    deployment: {
      id: 'dpl_2Ji7pBX7UUZqyGMJkn6CdDgXAy4D',
      name: 'storefront',
      url: 'storefront-7mbqs2zqc-acme.vercel.app',
      inspectorUrl: 'https://vercel.com/acme/storefront/2Ji7pBX7UUZqyGMJkn6CdDgXAy4D',
      meta: {
        githubCommitSha: '6113728f27ae82c7b1a177c8d03f9e96e0adf246',
        githubCommitRef: 'main',
        githubCommitMessage: 'Update checkout flow',
        githubCommitAuthorLogin: 'Codertocat',
        githubOrg: 'Codertocat',
        githubRepo: 'Hello-World',
      },
    },
    links: {
      deployment: 'https://vercel.com/acme/storefront/2Ji7pBX7UUZqyGMJkn6CdDgXAy4D',
      project: 'https://vercel.com/acme/storefront',
    },
    name: 'storefront',
    plan: 'pro',
    project: { id: 'prj_Q8HK9n3JRo5VjmFMXhMXG7V2xZpl' },
    regions: ['iad1'],
    target: 'production',
    type: 'LAMBDAS',
    url: 'storefront-7mbqs2zqc-acme.vercel.app',
  },
};

let cache: readonly WebhookSample[] | null = null;

/** The built-in samples, in a stable order (loaded once). */
export function builtinSamples(): readonly WebhookSample[] {
  if (cache !== null) return cache;
  const samples: WebhookSample[] = [
    {
      name: 'github.push',
      description: 'Code host: a push of one commit to a branch (GitHub `push` event)',
      body: octokitExample(
        'push',
        (example) => String(example['ref']).startsWith('refs/heads/') && Array.isArray(example['commits']) && example['commits'].length > 0,
      ),
      headers: { 'x-github-event': 'push', 'content-type': 'application/json' },
    },
    {
      name: 'github.pull_request.opened',
      description: 'Code host: a pull request was opened (GitHub `pull_request` event, action `opened`)',
      body: octokitExample('pull_request', (example) => example['action'] === 'opened'),
      headers: { 'x-github-event': 'pull_request', 'content-type': 'application/json' },
    },
    {
      name: 'jenkins.build_failed',
      description: 'Build server: a failed build as the Jenkins Notification plugin posts it (phase COMPLETED, status FAILURE)',
      body: JENKINS_BUILD_FAILED,
      headers: { 'content-type': 'application/json' },
    },
    {
      name: 'vercel.deployment_error',
      description: 'Deployment platform: a failed production deployment (Vercel `deployment.error` webhook)',
      body: VERCEL_DEPLOYMENT_ERROR,
      headers: { 'content-type': 'application/json' },
    },
  ];
  cache = Object.freeze(samples);
  return cache;
}

export const builtinSample = (name: string): WebhookSample | undefined => builtinSamples().find((sample) => sample.name === name);
