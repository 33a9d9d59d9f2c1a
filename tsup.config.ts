import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'core/index.ts',
    memory: 'adapters/storage/memory/index.ts',
    inbox: 'adapters/chat/inbox/index.ts',
    callbacks: 'adapters/callbacks/index.ts',
    client: 'core/client/index.ts',
    redis: 'adapters/storage/redis/index.ts',
    mongo: 'adapters/storage/mongo/index.ts',
    express: 'hosts/express/index.ts',
    koa: 'hosts/koa/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  splitting: true,
});
