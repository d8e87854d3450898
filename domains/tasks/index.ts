/** Assembles the task runtime: the service (actors, fires, runs), the webhook intake, secrets and the retention sweep. */
import { InboundHooks } from './inbound.js';
import { DeliverySweeper } from './retention.js';
import { SecretBox } from './secrets.js';
import { TaskService, type TaskServiceDeps } from './service.js';

export interface TaskRuntime {
  readonly service: TaskService;
  readonly inbound: InboundHooks;
  readonly secrets: SecretBox;
  readonly sweeper: DeliverySweeper;
  /** the runtime clock's time (tests inject the clock) */
  now(): number;
  /** starts the task actors and the sweep (after the stores are open, before the listener) */
  start(): Promise<void>;
  /** stops listening to platform events and sweeping; the supervisor stops the actors */
  stop(): Promise<void>;
}

export function createTaskRuntime(deps: TaskServiceDeps): TaskRuntime {
  const service = new TaskService(deps);
  const secrets = new SecretBox(deps.config.auth.jwtSecret);
  const inbound = new InboundHooks({ ...deps, tasks: service, secrets });
  const sweeper = new DeliverySweeper(deps.collections, deps.supervisor.clock, deps.config.webhookRetentionDays, deps.logger);
  return {
    service,
    inbound,
    secrets,
    sweeper,
    now: () => deps.supervisor.clock.now(),
    start: async () => {
      await service.start();
      sweeper.start();
    },
    stop: async () => {
      service.stop();
      await sweeper.stop();
    },
  };
}
