/**
 * A collection fed by a connector source (`source_id`, fixed at creation;
 * the connector must offer `documents`, e.g. `github`: Markdown files).
 * A sync lists the source's documents with their versions (a git blob sha),
 * reads only those whose version differs from the stored one, hands them to
 * the service, which re-indexes a document only when its sha256 changed, and
 * deletes the documents whose files are gone (not when the listing was
 * truncated: what a limit left out is not gone). Every call of the connector
 * goes through the egress guard it is given. One sync at a time per
 * collection (`409 sync_in_progress`).
 */
import { ToolError, type ConnectorPlugin, type NetPort, type SourceDocument } from '../../connectors/contract.js';
import type { RagCollectionDoc, RagDocumentDoc } from './documents.js';
import type { RagService } from './service.js';
import { ServiceError } from '../../runtime/errors.js';
import type { CatalogSource } from '../../runtime/tools/catalog.js';
import type { PluginRegistry } from '../../runtime/tools/registry.js';
import type { OrgId } from '../../runtime/store/types.js';

/** a sync (listing and reading) gives up after this long */
const SYNC_TIMEOUT_MS = 10 * 60_000;

export interface RagSyncReport {
  readonly source_id: string;
  readonly listed: number;
  readonly added: number;
  readonly updated: number;
  readonly unchanged: number;
  readonly deleted: number;
  /** the listing hit a limit: documents it left out were not deleted */
  readonly truncated: boolean;
}

/** what the sync needs of the sources domain: a source's decrypted config, and the loaded plugins with the egress guard */
export interface RagSourceDirectory {
  catalogSources(orgId: string, ids: readonly string[] | null): Promise<CatalogSource[]>;
  readonly registry: Pick<PluginRegistry, 'plugin' | 'net'>;
}

type Feed = NonNullable<ConnectorPlugin['documents']>;

/** the source's key in a document's `origin_ref`: `<source id>:<path>` */
const originRef = (sourceId: string, path: string): string => `${sourceId}:${path}`;

export class RagSourceSync {
  private readonly running = new Set<string>();

  constructor(
    private readonly rag: RagService,
    private readonly sources: RagSourceDirectory,
  ) {}

  /** 400 naming `source_id` unless it is a source of the organization whose connector offers documents */
  async requireFeed(org: OrgId, sourceId: string): Promise<{ source: CatalogSource; feed: Feed }> {
    const [source] = await this.sources.catalogSources(org, [sourceId]);
    const feed = source === undefined ? undefined : this.sources.registry.plugin(source.kind)?.plugin.documents;
    if (source === undefined || feed === undefined) {
      const why = source === undefined ? `no usable source ${sourceId}` : `connector ${source.kind} offers no documents`;
      throw new ServiceError('validation_error', `invalid source_id: ${why}`, { issues: [{ path: 'source_id', message: why }] });
    }
    return { source, feed };
  }

  async sync(org: OrgId, collectionId: string): Promise<RagSyncReport> {
    const collection = await this.rag.getCollection(org, collectionId);
    const sourceId = collection.source_id ?? null;
    if (sourceId === null) throw new ServiceError('conflict', `collection ${collection.name} is fed by no source`, { reason: 'no_source' });
    if (this.running.has(collection.id)) throw new ServiceError('sync_in_progress', `a sync of collection ${collection.name} is already running`);
    this.running.add(collection.id);
    try {
      const { source, feed } = await this.requireFeed(org, sourceId);
      return await this.run(org, collection, source, feed, AbortSignal.timeout(SYNC_TIMEOUT_MS));
    } finally {
      this.running.delete(collection.id);
    }
  }

  private async run(org: OrgId, collection: RagCollectionDoc, source: CatalogSource, feed: Feed, signal: AbortSignal): Promise<RagSyncReport> {
    const net: NetPort | undefined = this.sources.registry.net;
    const listed = await upstream(() => feed.list(source.config, signal, net), source);
    const stored = new Map<string, RagDocumentDoc>();
    for (const document of await this.rag.documentsOf(org, collection.id)) {
      if (document.origin === 'source' && document.origin_ref?.startsWith(`${source.id}:`)) stored.set(document.name, document);
    }
    const counts = { added: 0, updated: 0, unchanged: 0, deleted: 0 };
    const seen = new Set<string>();
    for (const item of listed.documents) {
      seen.add(item.path);
      const existing = stored.get(item.path);
      // the same version (git's content hash) as the stored document: not even read
      if (existing !== undefined && existing.status !== 'failed' && existing.metadata['version'] === item.version) {
        counts.unchanged += 1;
        continue;
      }
      const bytes = await upstream(() => feed.read(source.config, item, signal, net), source);
      const { unchanged } = await this.rag.addDocument(org, collection.id, {
        name: item.path,
        bytes,
        metadata: metadataOf(source, item),
        origin: 'source',
        originRef: originRef(source.id, item.path),
      });
      if (unchanged) counts.unchanged += 1;
      else if (existing === undefined) counts.added += 1;
      else counts.updated += 1;
    }
    if (!listed.truncated) {
      for (const [name, document] of stored) {
        if (seen.has(name)) continue;
        await this.rag.deleteDocument(org, collection.id, document.id);
        counts.deleted += 1;
      }
    }
    return { source_id: source.id, listed: listed.documents.length, ...counts, truncated: listed.truncated };
  }
}

/** the connector's metadata, plus the source and the version (what the next sync compares) */
const metadataOf = (source: CatalogSource, item: SourceDocument): Record<string, string> => ({
  ...item.metadata,
  source: source.name,
  version: item.version,
});

/** a connector failure as the route's error: an egress refusal keeps its code; anything else names the source */
async function upstream<T>(call: () => Promise<T>, source: CatalogSource): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const own = ToolError.within(error);
    if (own?.code === 'egress_refused') throw new ServiceError('egress_refused', own.message, { source_id: source.id, ...own.details });
    const message = own?.message ?? (error instanceof Error && error.name === 'TimeoutError' ? 'the source did not answer in time' : 'the source failed');
    throw new ServiceError('rag_sync_failed', `source ${source.name} (${source.kind}): ${message}`, {
      source_id: source.id,
      reason: own?.code ?? 'sync_failed',
      ...(own?.details ?? {}),
    });
  }
}
