/** memory.store: saves a memory entry, like `POST /memory`. */
import { MEMORY_KINDS, portOf, ToolError, type ConnectorTool, type MemoryKind } from '../../contract.js';
import { MAX_MEMORY_TEXT_BYTES } from '../limits.js';
import { requireRealm } from '../realm-check.js';

/** recorded as `created_by` when the run does not say who it acts for */
const UNKNOWN_ACTOR = 'agent';

export function storeTool(): ConnectorTool {
  return {
    name: 'store',
    effect: 'write',
    description:
      'Store a new memory entry for the organization so later runs can recall it: a fact, guideline, preference or note, in a realm (use "default" unless told otherwise). ' +
      'Keep `text` self-contained (it is recalled without this conversation). Returns the stored entry with its id.',
    input_schema: {
      type: 'object',
      properties: {
        kind: { enum: [...MEMORY_KINDS], description: 'fact, guideline, preference or note' },
        realm: { type: 'string', minLength: 1, maxLength: 100, description: 'an existing realm of the organization, e.g. "default"' },
        text: { type: 'string', minLength: 1, description: 'the entry itself, at most 32 KiB' },
        title: { type: 'string', maxLength: 200, description: 'a short title' },
        tags: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 100 }, maxItems: 50 },
        importance: { type: 'number', minimum: 0, maximum: 1, default: 0.5, description: '0 (trivia) to 1 (critical)' },
      },
      required: ['kind', 'realm', 'text'],
      additionalProperties: false,
    },
    run: async (args, ctx) => {
      ctx.signal.throwIfAborted();
      const text = args['text'] as string;
      if (Buffer.byteLength(text, 'utf8') > MAX_MEMORY_TEXT_BYTES) {
        throw new ToolError('invalid_arguments', `text is at most 32 KiB (${MAX_MEMORY_TEXT_BYTES} bytes of UTF-8)`, {
          issues: [{ path: 'text', message: `is over ${MAX_MEMORY_TEXT_BYTES} bytes` }],
        });
      }
      const memory = portOf(ctx, 'memory');
      const realm = args['realm'] as string;
      await requireRealm(memory, realm);
      // the last point before the write: a cancelled run stores nothing
      ctx.signal.throwIfAborted();
      const title = (args['title'] as string | undefined)?.trim();
      const entry = await memory.store({
        kind: args['kind'] as MemoryKind,
        realm,
        text,
        title: title ? title : null,
        tags: ((args['tags'] as string[] | undefined) ?? []).map((tag) => tag.trim()),
        // stored as a 32-bit float, as POST /memory does
        importance: Math.fround((args['importance'] as number | undefined) ?? 0.5),
        created_by: ctx.actorId ?? UNKNOWN_ACTOR,
      });
      return {
        id: entry.id,
        kind: entry.kind,
        realm: entry.realm,
        title: entry.title,
        text: entry.text,
        tags: entry.tags,
        importance: entry.importance,
        created_at: entry.created_at,
      };
    },
  };
}
