/**
 * The agent-type catalog: what kinds of agent an organization can create and
 * the shape of each kind's `config`. The zod schema validates `config` on
 * create and update and is published as JSON Schema by `GET /agents/types`.
 *
 * Config schemas are strict (an unknown key is a typo, not a setting), every
 * field is optional, and they carry no zod defaults, so what is stored is exactly what the caller sent; the
 * defaults the runtime applies are written in each field's description.
 * runtime/agent/agent-options.ts applies every option to chat, task and
 * binding runs alike; an option no run can honour is not offered here (stored
 * agents that still carry one load and run, the key ignored).
 */
import { z } from 'zod';
import { ServiceError } from '../../runtime/errors.js';

/** Settings every agent type understands. */
const commonConfig = {
  system_prompt: z
    .string()
    .min(1)
    .max(32_768, { message: 'system_prompt is at most 32768 characters' })
    .describe('replaces the built-in instructions of the type (a task or channel system_prompt replaces this one)'),
  model: z.string().min(1).max(200).describe('LLM model for this agent; default: llm_model from the organization settings'),
  max_turns: z
    .number()
    .int()
    .min(1)
    .max(100, { message: 'max_turns is at most 100' })
    .describe('LLM turns (tool round trips) per run before it stops; default 20'),
  temperature: z.number().min(0).max(2, { message: 'temperature is at most 2' }).describe('sampling temperature; default 0.2'),
};

const realmNames = z.array(z.string().min(1).max(100)).max(50);

export interface AgentType {
  readonly agent_type: string;
  readonly description: string;
  readonly config: z.ZodType<Record<string, unknown>>;
}

export const AGENT_TYPES: readonly AgentType[] = [
  {
    agent_type: 'assistant',
    description: 'General chat agent: answers questions with the connector tools, the context graph and memory.',
    config: z
      .strictObject({
        ...commonConfig,
        recall_memory: z.boolean().describe('put the memory entries most relevant to each message (up to 5) in the system prompt; default true'),
        memory_realms: realmNames.describe('realms the per-message recall searches; default: all'),
      })
      .partial(),
  },
  {
    agent_type: 'sre',
    description: 'Infrastructure diagnosis: reads builds, deployments, clusters and dashboards to explain failures.',
    config: z
      .strictObject({
        ...commonConfig,
        read_only: z.boolean().describe('refuse write-type tools regardless of approval defaults; default true'),
        escalation_channel: z.string().min(1).max(200).describe('chat channel named in the instructions as where a diagnosis that needs a human goes'),
      })
      .partial(),
  },
  {
    agent_type: 'code_reviewer',
    description: 'Reviews pull requests on the code host and comments on correctness, security and tests.',
    config: z
      .strictObject({
        ...commonConfig,
        focus: z
          .array(z.enum(['correctness', 'security', 'performance', 'style', 'tests']))
          .min(1)
          .max(5)
          .describe('what the review looks at (an instruction to the model); default: correctness, security, tests'),
      })
      .partial(),
  },
  {
    agent_type: 'summarizer',
    description: 'Condenses threads, documents and activity into short summaries.',
    config: z
      .strictObject({
        ...commonConfig,
        format: z.enum(['paragraph', 'bullets']).describe('shape of the summary (an instruction to the model); default paragraph'),
        max_words: z.number().int().min(20).max(5000).describe('upper bound on summary length (an instruction to the model); default 200'),
      })
      .partial(),
  },
];

export const AGENT_TYPE_NAMES = AGENT_TYPES.map((type) => type.agent_type) as [string, ...string[]];

const agentType = (name: string): AgentType | undefined => AGENT_TYPES.find((type) => type.agent_type === name);

/** The JSON Schema of a type's config, as published in the catalog. */
export function configJsonSchema(type: AgentType): Record<string, unknown> {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(type.config, { io: 'input' }) as Record<string, unknown>;
  return schema;
}

/**
 * The validated config of an agent of `typeName`.
 * @throws ServiceError `validation_error` when the type is unknown or the config does not fit its schema (the message and `details.issues` name the path, e.g. `config.max_turns`)
 */
export function validateAgentConfig(typeName: string, config: Record<string, unknown>): Record<string, unknown> {
  const type = agentType(typeName);
  if (!type) {
    throw new ServiceError('validation_error', `agent_type "${typeName}" is not in the catalog (GET /agents/types)`, {
      issues: [{ path: 'agent_type', message: `one of ${AGENT_TYPE_NAMES.join(', ')}` }],
    });
  }
  const result = type.config.safeParse(config);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    // an unknown key is reported on its parent; name the key itself
    path: ['config', ...issue.path.map(String), ...(issue.code === 'unrecognized_keys' ? issue.keys.slice(0, 1) : [])].join('.'),
    message: issue.message,
  }));
  const first = issues[0];
  throw new ServiceError('validation_error', `invalid config for agent_type ${typeName}: ${first ? `${first.path}: ${first.message}` : 'bad value'}`, {
    issues,
  });
}
