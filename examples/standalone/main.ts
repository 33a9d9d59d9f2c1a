import type { Logger } from '../../core/index.js';
import { baseUrl, startStandalone } from './app.js';
import { readCommandLine, storageBudget, usage } from './command-line.js';
import { readConfig } from './config.js';
import { demoApiKey } from './demo-seed.js';
import { jsonLogger } from './json-logger.js';
import { redactUrl } from './open-storage.js';
import { stopOnSignals } from './shutdown.js';

const failStart = (logger: Logger, error: unknown): never => {
  logger.error('could not start', { error: error instanceof Error ? error.message : String(error) });
  process.exit(1);
};

const { commandLine, config } = (() => {
  try {
    const commandLine = readCommandLine(process.argv.slice(2));
    if (commandLine.help) {
      process.stdout.write(usage);
      process.exit(0);
    }
    return { commandLine, config: readConfig(process.env) };
  } catch (error) {
    return failStart(jsonLogger(), error);
  }
})();
const logger = jsonLogger(config.LOG_LEVEL);

process.on('unhandledRejection', (reason) => logger.error('unhandled rejection', { error: String(reason) }));

const startup = new AbortController();
const starting = startStandalone(config, logger, {
  signal: startup.signal,
  storageBudget: storageBudget(commandLine, config),
});
stopOnSignals({
  logger,
  timeoutMs: config.NOTIFY_SHUTDOWN_TIMEOUT_MS,
  async stop() {
    startup.abort();
    const service = await starting.catch(() => undefined);
    await service?.close();
  },
});

try {
  const service = await starting;
  const base = baseUrl(config.HOST, service.port);
  logger.info('ready', {
    port: service.port,
    storage: redactUrl(config.NOTIFY_STORAGE),
    api: `${base}/api/notify`,
    ...(service.platforms.includes('inbox') ? { inbox: `${base}/inbox` } : {}),
    ...(service.platforms.includes('slack') ? { slackInteractivity: `${base}/slack/interactivity` } : {}),
    ...(service.platforms.includes('teams') ? { teamsMessaging: `${base}/teams/messages` } : {}),
    openapi: `${base}/openapi.json`,
    account: `${base}/account`,
    ...(config.NOTIFY_SEED === undefined ? { demoApiKey } : { seed: config.NOTIFY_SEED }),
  });
} catch (error) {
  if (!startup.signal.aborted) failStart(logger, error);
}
