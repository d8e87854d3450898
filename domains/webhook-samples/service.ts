/**
 * Webhook samples: the built-in samples of common senders and the organization's saved ones;
 * `run` fires one into a task as if the sender had posted it (origin `sample`, no delivery stored).
 */
import type { Collections } from '../collections.js';
import type { TaskFiring } from '../tasks/firing.js';
import { builtinSample, builtinSamples, type WebhookSample } from './builtin.js';
import type { WebhookSampleDoc } from './documents.js';
import { ServiceError } from '../../runtime/errors.js';
import { unique } from '../../runtime/store/documents.js';
import type { OrgId } from '../../runtime/store/types.js';

export interface SampleFields {
  readonly name: string;
  readonly description: string;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string>;
}

/** header names are matched lowercased, as the task sees HTTP headers */
const lowercaseKeys = (headers: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

export class WebhookSampleService {
  constructor(
    private readonly collections: Pick<Collections, 'webhookSamples'>,
    private readonly tasks: Pick<TaskFiring, 'fire'>,
  ) {}

  /** the built-ins first, then the organization's saved samples */
  async list(org: OrgId): Promise<{ readonly builtins: readonly WebhookSample[]; readonly saved: WebhookSampleDoc[] }> {
    return { builtins: builtinSamples(), saved: await this.collections.webhookSamples.findAll(org) };
  }

  /** built-in names are taken */
  save(org: OrgId, createdBy: string, fields: SampleFields): Promise<WebhookSampleDoc> {
    if (builtinSample(fields.name)) {
      throw new ServiceError('conflict', `${fields.name} is a built-in sample name`, { fields: ['name'] });
    }
    return unique('sample', () =>
      this.collections.webhookSamples.insert(org, {
        name: fields.name,
        description: fields.description,
        body: fields.body,
        headers: lowercaseKeys(fields.headers),
        created_by: createdBy,
      }),
    );
  }

  /** built-in samples cannot be deleted */
  async delete(org: OrgId, name: string): Promise<void> {
    if (builtinSample(name)) throw new ServiceError('conflict', `${name} is a built-in sample and cannot be deleted`);
    const saved = await this.collections.webhookSamples.findOne(org, { name });
    if (!saved) throw new ServiceError('not_found', `sample ${name} not found`);
    await this.collections.webhookSamples.delete(org, saved.id);
  }

  /** fires the sample into the task as if its sender had posted it */
  async run(org: OrgId, name: string, taskId: string): ReturnType<TaskFiring['fire']> {
    const sample: { body: Record<string, unknown>; headers: Record<string, string> } | null =
      builtinSample(name) ?? (await this.collections.webhookSamples.findOne(org, { name }));
    if (!sample) throw new ServiceError('not_found', `sample ${name} not found`);
    return this.tasks.fire(org, taskId, {
      origin: 'sample',
      // a copy: the built-in bodies are shared
      body: structuredClone(sample.body),
      headers: { ...sample.headers },
      delivery_id: null,
    });
  }
}
