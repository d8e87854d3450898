/**
 * Auto-embed (setting `auto_embed_on_ingest`, with `embedding_model`): memory
 * entries and the `body` text of ingested rows are added, in the background,
 * to a collection the service keeps per realm (`_auto.memory.<realm>`,
 * `_auto.ingest.<realm>`, created on first use with the organization's
 * embedding model), so /rag/search finds them and memory recall can rank by
 * vector as well as by text. A memory entry is one document named by its id
 * (a changed text re-indexes it, an unchanged one is left alone); an ingest
 * batch is one document named `<pipeline id>/<run id>`. The indexing itself
 * is the RAG indexer's (in process, one document at a time).
 */
import type { Logger } from 'pino';
import type { RagCollectionDoc } from './documents.js';
import type { Embedders } from './embedder.js';
import type { RagSearch } from './search.js';
import type { RagService } from './service.js';
import type { OrgId } from '../../runtime/store/types.js';

type AutoKind = 'memory' | 'ingest';

const autoCollectionName = (kind: AutoKind, realm: string): string => `_auto.${kind}.${realm}`;

/** the most characters of an ingest batch's bodies embedded */
const MAX_INGEST_TEXT = 1_000_000;

export class AutoEmbed {
  /** collection creation, one at a time per organization (two entries of a new realm create it once) */
  private readonly creating = new Map<string, Promise<RagCollectionDoc>>();

  constructor(
    private readonly rag: RagService,
    private readonly search: RagSearch,
    private readonly embedders: Embedders,
    private readonly logger: Logger,
  ) {}

  private async collection(org: OrgId, kind: AutoKind, realm: string): Promise<RagCollectionDoc> {
    const name = autoCollectionName(kind, realm);
    const existing = await this.rag.findCollectionByName(org, name);
    if (existing !== null) return existing;
    const key = `${org}\u0000${name}`;
    let pending = this.creating.get(key);
    if (pending === undefined) {
      pending = this.rag
        .createCollection(org, 'system', {
          name,
          realm,
          description: `auto-embedded ${kind === 'memory' ? 'memory entries' : 'ingested row bodies'} of realm ${realm}`,
        })
        .finally(() => this.creating.delete(key));
      this.creating.set(key, pending);
    }
    return pending;
  }

  /** a memory entry created or changed: (re-)embedded in the background when the setting is on */
  memoryChanged(org: OrgId, entry: { readonly id: string; readonly realm: string; readonly text: string; readonly title: string | null }): void {
    void this.run(org, async () => {
      const collection = await this.collection(org, 'memory', entry.realm);
      const text = entry.title === null ? entry.text : `${entry.title}\n\n${entry.text}`;
      await this.rag.addDocument(org, collection.id, {
        name: entry.id,
        bytes: Buffer.from(text, 'utf8'),
        format: 'text',
        origin: 'memory',
        originRef: entry.id,
      });
    });
  }

  /** a memory entry deleted (or moved to another realm): its vectors go */
  async memoryRemoved(org: OrgId, entry: { readonly id: string; readonly realm: string }): Promise<void> {
    const collection = await this.rag.findCollectionByName(org, autoCollectionName('memory', entry.realm));
    if (collection === null) return;
    const document = (await this.rag.documentsOf(org, collection.id)).find((doc) => doc.name === entry.id);
    if (document !== undefined) await this.rag.deleteDocument(org, collection.id, document.id);
  }

  /** an ingest batch committed: the `body` of its rows, embedded in the background when the setting is on */
  ingested(org: OrgId, batch: { readonly realm: string; readonly pipelineId: string; readonly runId: string; readonly body: Buffer }): void {
    void this.run(org, async () => {
      const bodies: string[] = [];
      let size = 0;
      for (const line of batch.body.toString('utf8').split('\n')) {
        if (line.trim() === '' || size > MAX_INGEST_TEXT) continue;
        try {
          const row = JSON.parse(line) as unknown;
          const body = typeof row === 'object' && row !== null ? (row as Record<string, unknown>)['body'] : undefined;
          if (typeof body === 'string' && body.trim() !== '') {
            bodies.push(body);
            size += body.length;
          }
        } catch {
          // the writer already refused or skipped what does not parse
        }
      }
      if (bodies.length === 0) return;
      const collection = await this.collection(org, 'ingest', batch.realm);
      await this.rag.addDocument(org, collection.id, {
        name: `${batch.pipelineId}/${batch.runId}`,
        bytes: Buffer.from(bodies.join('\n\n').slice(0, MAX_INGEST_TEXT), 'utf8'),
        format: 'text',
        origin: 'ingest',
        originRef: batch.pipelineId,
        metadata: { pipeline_id: batch.pipelineId, run_id: batch.runId },
      });
    });
  }

  /**
   * Memory entry ids by vector similarity to `query`, best first, from the
   * auto-embedded memory of `realm` (every realm when undefined); null when
   * the organization has none, so recall stays text-only.
   */
  async rankMemory(org: OrgId, realms: readonly string[], query: string, limit: number): Promise<string[] | null> {
    const ranked: { id: string; score: number }[] = [];
    let any = false;
    for (const realm of realms) {
      const collection = await this.rag.findCollectionByName(org, autoCollectionName('memory', realm));
      if (collection === null || (await this.rag.chunkCount(org, collection.id)) === 0) continue;
      any = true;
      const hits = await this.search.search(org, { query, collection: collection.id, k: limit, mode: 'vector' });
      for (const hit of hits) ranked.push({ id: hit.document.name, score: hit.score });
    }
    if (!any) return null;
    const seen = new Set<string>();
    return ranked
      .sort((a, b) => b.score - a.score)
      .map((hit) => hit.id)
      .filter((id) => (seen.has(id) ? false : (seen.add(id), true)));
  }

  private async run(org: OrgId, work: () => Promise<void>): Promise<void> {
    try {
      if (!(await this.embedders.autoEmbed(org))) return;
      await work();
    } catch (error) {
      this.logger.warn({ err: error, org }, 'auto-embed failed');
    }
  }
}
