/** `npm start`: configuration from the environment, the service, clean shutdown on SIGTERM/SIGINT. */
import { startService } from './gateway/app.js';
import { ConfigError, loadConfig } from './runtime/config.js';
import { restrictUmask } from './runtime/file-modes.js';
import { createLogger } from './runtime/logger.js';

async function main(): Promise<void> {
  // before loadConfig, which may create DATA_DIR and the development secret
  restrictUmask();
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config);
  if (config.auth.jwtSecretFile) logger.warn({ file: config.auth.jwtSecretFile }, 'JWT_SECRET not set: using a generated development secret');
  const service = await startService(config, logger);
  logger.info({ url: service.url, host: config.host, port: service.port, data_dir: config.dataDir }, `listening on ${service.url}`);

  // a stray rejection is a bug to log, never a reason to drop every in-flight request
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));

  let shuttingDown = false;
  const shutdown = (signal: string): void => {
    if (shuttingDown) {
      // a second signal: the operator will not wait for the rest
      logger.error({ signal }, 'second stop signal: exiting now');
      process.exit(1);
    }
    shuttingDown = true;
    logger.info({ signal, deadline_s: config.shutdownDeadlineSecs }, 'shutting down: finishing in-flight requests');
    // whatever a store or a plugin is doing (a closed disk, a hung engine), the process ends by the deadline
    setTimeout(() => {
      logger.error({ deadline_s: config.shutdownDeadlineSecs }, 'shutdown deadline passed: exiting with work still closing');
      process.exit(1);
    }, config.shutdownDeadlineSecs * 1000);
    service.stop().then(
      () => {
        logger.info('stopped cleanly');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
