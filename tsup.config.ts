import { defineConfig, type Options } from 'tsup';

/** The library: every subpath export, ESM and CommonJS, with declarations. */
export const libraryBuild: Options = {
  entry: {
    index: 'core/index.ts',
    memory: 'adapters/storage/memory/index.ts',
    inbox: 'adapters/chat/inbox/index.ts',
    slack: 'adapters/chat/slack/index.ts',
    teams: 'adapters/chat/teams/index.ts',
    account: 'account/index.ts',
    callbacks: 'adapters/callbacks/index.ts',
    client: 'client/index.ts',
    'adapter-kit': 'core/adapter-kit.ts',
    testing: 'testing/index.ts',
    redis: 'adapters/storage/redis/index.ts',
    mongo: 'adapters/storage/mongo/index.ts',
    express: 'hosts/express/index.ts',
    koa: 'hosts/koa/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  // Both builds run at once: this one must not delete what the other writes in dist/bin.
  clean: ['!bin/**'],
  sourcemap: true,
  target: 'node20',
  splitting: true,
};

/**
 * The `chat-notify` executable (package.json `bin`): the standalone service, ESM. Split, so that
 * the Redis and MongoDB adapters, with their drivers, load only when `NOTIFY_STORAGE` selects them.
 */
export const cliBuild: Options = {
  entry: { 'chat-notify': 'examples/standalone/main.ts' },
  outDir: 'dist/bin',
  format: ['esm'],
  banner: { js: '#!/usr/bin/env node' },
  clean: true,
  sourcemap: true,
  target: 'node20',
  splitting: true,
};

export default defineConfig([libraryBuild, cliBuild]);
