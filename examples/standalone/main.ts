import { startStandalone } from './app.js';
import { readConfig } from './config.js';
import { demoApiKey } from './demo-seed.js';
import { jsonLogger } from './json-logger.js';
import { redactUrl } from './open-storage.js';

const config = readConfig(process.env);
const logger = jsonLogger(config.LOG_LEVEL);

process.on('unhandledRejection', (reason) => logger.error('unhandled rejection', { error: String(reason) }));

try {
  const service = await startStandalone(config, logger);
  const base = `http://localhost:${service.port}`;
  logger.info('listening', {
    port: service.port,
    storage: redactUrl(config.NOTIFY_STORAGE),
    api: `${base}/api/notify`,
    inbox: `${base}/inbox`,
    openapi: `${base}/openapi.json`,
    ...(config.NOTIFY_SEED === undefined ? { demoApiKey } : { seed: config.NOTIFY_SEED }),
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping', { signal });
    service.close().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error('could not stop cleanly', { error: String(error) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
} catch (error) {
  logger.error('could not start', { error: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}
