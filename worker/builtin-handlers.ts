/** The job kinds every worker runs. */
import { createEgressGuard } from '../runtime/net/egress.js';
import type { WorkerConfig } from './config.js';
import type { HandlerTable } from './handlers.js';
import { modelTurnHandler } from './model-turn.js';
import { graphMaintenanceHandler } from './graph-maintenance.js';
import { ingestBodyHandler } from './ingest-body.js';
import { mediaPollHandler } from './media-poll.js';
import { ragIndexHandler } from './rag-index.js';

export function builtinHandlers(config: Pick<WorkerConfig, 'egressAllow'>): HandlerTable {
  const egress = createEgressGuard({ allow: config.egressAllow });
  return {
    model_turn: modelTurnHandler(egress.fetch),
    graph_maintenance: graphMaintenanceHandler,
    ingest_body: ingestBodyHandler,
    media_poll: mediaPollHandler,
    rag_index: ragIndexHandler,
  };
}
