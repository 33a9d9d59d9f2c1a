import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { accountPages, passwordSignIn } from '../../account/index.js';
import { httpCallbacks } from '../../adapters/callbacks/index.js';
import { scopedTransportState } from '../../core/adapter-kit.js';
import { createNotifier, type Logger, type Notifier, seedSchema } from '../../core/index.js';
import { loadPasswords } from './account-sign-in.js';
import { chatTransports } from './chat-transports.js';
import type { StandaloneConfig } from './config.js';
import { demoSeed } from './demo-seed.js';
import { createHttpServer } from './http-server.js';
import { checkStorageSetting, type OpenedStorage, openStorage, redactUrl } from './open-storage.js';
import { type Readiness, requestListener } from './request-listener.js';
import { type SeedRestore, seedRestore } from './seed-restore.js';
import {
  type StorageBudget,
  type StorageWaitOptions,
  storageDeadline,
  waitForStorage,
  whileStorageWaits,
} from './storage-wait.js';

/** A running standalone service. */
export interface Standalone {
  notifier: Notifier;
  server: Server;
  /** The port actually listened on (useful with `PORT=0`). */
  port: number;
  /** The chat platforms it delivers through (`inbox`, `slack`, `teams`). */
  platforms: string[];
  /** Drains the requests in flight, then stops the notifier and releases the storage. */
  close(): Promise<void>;
}

/** Options of {@link startStandalone}. */
export interface StartOptions {
  /** How long to wait for storage; as long as it takes without one. */
  storageBudget?: StorageBudget;
  /** Stops the start (a signal during the wait for storage); the start then rejects with its reason. */
  signal?: AbortSignal;
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * The seed of `NOTIFY_SEED`, or the demo's, checked as the notifier will check it when it loads it
 * (once the storage answers); an error names the setting and the file.
 */
async function loadSeed(path: string | undefined): Promise<unknown> {
  if (path === undefined) return demoSeed;
  const text = await readFile(path, 'utf8').catch((error: unknown) => {
    throw new Error(`NOTIFY_SEED: ${path} could not be read: ${messageOf(error)}`);
  });
  let seed: unknown;
  try {
    seed = JSON.parse(text);
  } catch (error) {
    throw new Error(`NOTIFY_SEED: ${path} is not valid JSON: ${messageOf(error)}`);
  }
  const checked = seedSchema.safeParse(seed);
  if (!checked.success) {
    throw new Error(`NOTIFY_SEED: ${path} is no valid seed: ${z.prettifyError(checked.error)}`);
  }
  return seed;
}

/**
 * Where a client of this machine reaches the service: `localhost` when it listens on every address,
 * else the address it listens on (an IPv6 one in brackets).
 */
export function baseUrl(host: string, port: number): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return `http://localhost:${port}`;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Starts the service: memory storage and the local inbox by default, the API, the inbox and the
 * account pages (with sign-in for the seeded users that have a password) at the root. It accepts
 * connections at once (logged as `listening`) and resolves once storage answers and the seed is
 * loaded; until then `/healthz` and every other path answer 503.
 */
export async function startStandalone(
  config: StandaloneConfig,
  logger: Logger,
  options: StartOptions = {},
): Promise<Standalone> {
  checkStorageSetting(config.NOTIFY_STORAGE);
  const target = redactUrl(config.NOTIFY_STORAGE);
  if (config.NOTIFY_ALLOW_INSECURE_CALLBACKS) {
    logger.warn(
      'NOTIFY_ALLOW_INSECURE_CALLBACKS is on: callbacks may go to http: and to loopback or private addresses. Never use this in production.',
    );
  }
  const readiness: Readiness = { reason: `connecting to ${target}` };
  const { server, drain } = createHttpServer(requestListener(readiness, logger), {
    headersTimeoutMs: config.NOTIFY_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.NOTIFY_REQUEST_TIMEOUT_MS,
    // Half the time the stop may take: what is left serves the requests whose bodies did arrive.
    drainBodyGraceMs: Math.floor(config.NOTIFY_SHUTDOWN_TIMEOUT_MS / 2),
  });
  await new Promise<void>((resolve, reject) => {
    const refused = (error: Error) =>
      reject(new Error(`cannot listen on HOST ${config.HOST}, PORT ${config.PORT}: ${error.message}`));
    server.once('error', refused);
    server.listen(config.PORT, config.HOST, () => {
      server.off('error', refused);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  logger.info('listening', { port, health: `${baseUrl(config.HOST, port)}/healthz` });

  let opened: OpenedStorage | undefined;
  // Made once the notifier is: a connection lost and back before then needs nothing restored.
  let restore: SeedRestore | undefined;
  try {
    // Read before the wait for storage: a seed or a platform setting in error says so at once, not
    // once the storage answers.
    const seed = await loadSeed(config.NOTIFY_SEED);
    const transports = await chatTransports(config, seed, logger);
    const onRestored = () => restore?.restored();
    const waiting: StorageWaitOptions = {
      target,
      budget: options.storageBudget,
      logger,
      signal: options.signal,
      onFailure: (reason) => {
        readiness.reason = `${target}: ${reason}`;
      },
    };
    // One budget for the whole start: opening the storage, then loading the seed on it.
    const deadline = storageDeadline(waiting);
    opened = await waitForStorage(
      (signal) =>
        openStorage(config.NOTIFY_STORAGE, {
          redisPrefix: config.NOTIFY_REDIS_PREFIX,
          logger,
          signal,
          onRestored,
        }),
      waiting,
      deadline,
    );
    const ready = createNotifier({
      storage: opened.storage,
      transports,
      callbacks: httpCallbacks({ allowInsecure: config.NOTIFY_ALLOW_INSECURE_CALLBACKS }),
      rateLimits: {
        perKey: config.NOTIFY_RATE_LIMIT_PER_KEY,
        perOrganization: config.NOTIFY_RATE_LIMIT_PER_ORGANIZATION,
        ...(config.NOTIFY_RATE_LIMIT_KEY_CREATION
          ? { keyCreation: config.NOTIFY_RATE_LIMIT_KEY_CREATION }
          : {}),
      },
      trustProxy: config.NOTIFY_TRUST_PROXY,
      retention: { days: config.NOTIFY_RETENTION_DAYS },
      logger,
    });
    // A storage lost again meanwhile is waited for as it was at first: a blip here is no failed start.
    readiness.reason = 'loading the seed into it';
    await whileStorageWaits(() => ready.seed(seed), waiting, deadline);
    // Sessions, password hashes, the sign-in slow-down and the audit record, shared by every instance.
    const accountState = scopedTransportState(opened.storage.transportState, 'account');
    const signIn = passwordSignIn({ state: accountState });
    const { directory: seededDirectory } = opened.storage;
    // Each password is hashed (or checked against its hash) with scrypt: a fraction of a second apiece.
    readiness.reason = 'loading the seed into it: hashing the passwords of its users';
    const signIns = await whileStorageWaits(
      () => loadPasswords(signIn, seededDirectory, seed, logger),
      waiting,
      deadline,
    );
    logger.info('account sign-in', { users: signIns });
    const { directory } = opened.storage;
    const firstOrganization = seedSchema.parse(seed).organizations[0]?.id;
    const restoring = seedRestore({
      present: async () =>
        firstOrganization === undefined || (await directory.getOrganization(firstOrganization)) !== null,
      load: async () => {
        await ready.seed(seed);
        await loadPasswords(signIn, directory, seed, logger);
      },
      logger,
    });
    restore = restoring;
    const pages = accountPages({
      notifier: ready,
      state: accountState,
      signIn,
      trustProxy: config.NOTIFY_TRUST_PROXY,
      logger,
    });
    options.signal?.throwIfAborted();
    ready.start();
    readiness.handlers = [ready.handle, pages.handle];
    const storageOpened = opened;
    return {
      notifier: ready,
      server,
      port,
      platforms: transports.map((transport) => transport.platform),
      async close() {
        restoring.stop();
        await drain();
        await ready.stop();
        await storageOpened.close();
      },
    };
  } catch (error) {
    restore?.stop();
    await drain();
    await opened?.close();
    throw error;
  }
}
