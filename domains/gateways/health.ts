/**
 * The health schedule: every GATEWAY_HEALTH_INTERVAL_SECS on the runtime
 * clock (tests move a simulated one), every gateway of every organization is
 * probed and its `last_health_status` stored. One pass at a time; a pending
 * timer never keeps the process alive; `stop` waits for a pass in progress.
 */
import type { Logger } from 'pino';
import type { Collections } from '../collections.js';
import { asOrgId } from '../../runtime/store/types.js';
import type { GatewayService } from './service.js';

const BATCH = 500;

export class GatewayHealthSchedule {
  private timer: unknown = null;
  private running: Promise<number> | null = null;
  private stopped = false;

  constructor(
    private readonly collections: Collections,
    private readonly gateways: GatewayService,
    private readonly intervalSecs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    const tick = (): void => {
      if (this.stopped) return;
      this.timer = this.gateways.clock.setTimeout(() => void this.pass().finally(tick), this.intervalSecs * 1000);
      (this.timer as { unref?: () => void } | null)?.unref?.();
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) this.gateways.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass now (or the one in progress): how many gateways were probed. Never throws. */
  pass(): Promise<number> {
    this.running ??= this.probeAll().finally(() => (this.running = null));
    return this.running;
  }

  private async probeAll(): Promise<number> {
    let probed = 0;
    try {
      for (const organization of await this.collections.organizations.findAll()) {
        const org = asOrgId(organization.id);
        for (let after: string | undefined = undefined; ;) {
          const page = await this.collections.gateways.list(org, { limit: BATCH, ...(after === undefined ? {} : { after }) });
          // one gateway's engine being slow does not hold the others
          await Promise.all(page.items.map((gateway) => this.gateways.probe(org, gateway)));
          probed += page.items.length;
          if (page.nextAfter === null) break;
          after = page.nextAfter;
        }
      }
    } catch (error) {
      this.logger.error({ err: error }, 'gateway health pass failed');
    }
    return probed;
  }
}
