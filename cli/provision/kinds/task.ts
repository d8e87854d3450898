/**
 * `service_task`: an automatic agent run (`/tasks`) in its provisioning form.
 * `cron_expression` and `timezone` are the schedule trigger's `cron` and
 * `timezone`; `message_template` is the input template's `instruction` and
 * `response_channel` its `response_channel` key (passed to the run);
 * `source_ids` is `enabled_source_ids`; `is_active` is `enabled`. The trigger
 * kind is fixed at creation (`trigger_type` forces replacement); a webhook
 * task answers its `webhook_slug`, `webhook_url` and, once (the create's
 * answer; reads show a mask), the `webhook_secret` its senders sign with:
 * kept in state from then on.
 */
import type { Attributes, ResourceKind, Value } from '../schema.js';
import { deleteIfPresent, itemPath, readOrNull } from './rest.js';

type TaskView = {
  id: string;
  name: string;
  trigger: { kind: string; cron?: string; timezone?: string; webhook_url?: string; secret?: string };
  input_template: Record<string, Value> | null;
  system_prompt: string | null;
  enabled_source_ids: string[] | null;
  enabled: boolean;
};

const text = (value: Value | undefined): Value => (typeof value === 'string' ? value : null);

/** the API shows a webhook secret in full only in the answers to create and rotate-secret */
const MASKED_SECRET = 'whsec_********';

/** `prior`: the state before, whose secret stands in for the API's mask (none at import: unknown, null) */
const state = (view: TaskView, prior?: Attributes): Attributes => {
  const url = view.trigger.webhook_url ?? null;
  const secret = view.trigger.secret;
  const webhookSecret = secret === undefined ? null : secret === MASKED_SECRET ? (prior?.['webhook_secret'] ?? null) : secret;
  return {
    id: view.id,
    name: view.name,
    cron_expression: view.trigger.cron ?? null,
    timezone: view.trigger.timezone ?? null,
    message_template: text(view.input_template?.['instruction']),
    system_prompt: view.system_prompt,
    response_channel: text(view.input_template?.['response_channel']),
    source_ids: view.enabled_source_ids,
    is_active: view.enabled,
    trigger_type: view.trigger.kind,
    webhook_slug: url === null ? null : (url.split('/').pop() ?? null),
    webhook_url: url,
    webhook_secret: webhookSecret,
  };
};

/** the fields both create and update send; `priorTimezone` keeps a zone configuration leaves to the server */
const body = (desired: Attributes, priorTimezone: Value = null): Record<string, unknown> => {
  const template: Record<string, Value> = {};
  if (desired['message_template'] !== null) template['instruction'] = desired['message_template'] ?? null;
  if (desired['response_channel'] !== null) template['response_channel'] = desired['response_channel'] ?? null;
  const out: Record<string, unknown> = {
    name: desired['name'],
    input_template: Object.keys(template).length > 0 ? template : null,
    system_prompt: desired['system_prompt'] ?? null,
    enabled_source_ids: desired['source_ids'] ?? null,
    enabled: desired['is_active'] ?? true,
  };
  if (desired['trigger_type'] !== 'webhook') {
    const timezone = desired['timezone'] ?? priorTimezone;
    out['trigger'] = { kind: 'schedule', cron: desired['cron_expression'], ...(timezone === null ? {} : { timezone }) };
  }
  return out;
};

export const taskKind: ResourceKind = {
  name: 'service_task',
  description:
    'A task: an agent run started by a schedule (cron in a time zone) or by a signed webhook. The trigger type is fixed at creation; a webhook task answers its URL.',
  attributes: {
    name: { type: 'string', required: true, description: 'unique in the organization' },
    cron_expression: { type: 'string', optional: true, description: 'five-field cron of a `schedule` task' },
    timezone: { type: 'string', optional: true, computed: true, description: 'IANA zone the cron is read in (server default `UTC`)' },
    message_template: { type: 'string', optional: true, description: 'the instruction of each run; a template over `{{trigger.body}}` for webhook tasks' },
    system_prompt: { type: 'string', optional: true, description: "the runs' system prompt; absent: the agent's" },
    response_channel: { type: 'string', optional: true, description: 'the chat channel the run answers in (passed to the run as `response_channel`)' },
    source_ids: { type: 'list_string', optional: true, description: 'the only sources the agent may see; absent: all' },
    is_active: { type: 'bool', optional: true, default: true, description: 'an inactive task does not fire (its webhook URL answers 404)' },
    trigger_type: { type: 'string', optional: true, immutable: true, default: 'schedule', description: '`schedule` or `webhook`' },
    webhook_slug: { type: 'string', computed: true, description: 'the path id of a webhook task URL' },
    webhook_url: { type: 'string', computed: true, description: 'where the sender of a webhook task posts' },
    webhook_secret: {
      type: 'string',
      computed: true,
      sensitive: true,
      description:
        'the secret senders of a webhook task sign with (`X-Service-Signature: sha256=<hex HMAC-SHA256 of the body>`); answered once at creation and kept in state (null after an import: the API shows it only at creation and in the answer to `POST /tasks/:id/rotate-secret`; `provision apply --replace` makes the task again with a new one)',
    },
  },
  create: async (api, desired) => {
    const request = body(desired);
    if (desired['trigger_type'] === 'webhook') request['trigger'] = { kind: 'webhook' };
    return state(await api.json<TaskView>('POST', '/tasks', { body: request }));
  },
  read: async (api, id, prior) => {
    const view = await readOrNull<TaskView>(api, itemPath('/tasks', id));
    return view && state(view, prior);
  },
  update: async (api, id, desired, prior) =>
    state(await api.json<TaskView>('PATCH', itemPath('/tasks', id), { body: body(desired, prior['timezone'] ?? null) }), prior),
  delete: (api, id) => deleteIfPresent(api, itemPath('/tasks', id)),
};
