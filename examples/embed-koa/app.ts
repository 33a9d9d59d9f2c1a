// In an application of your own, import from the package instead:
//   import { createNotifier } from 'chat-notify'; import { notifyMiddleware } from 'chat-notify/koa'; ...
import Koa from 'koa';
import { httpCallbacks } from '../../adapters/callbacks/index.js';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier, type Notifier } from '../../core/index.js';
import { notifyMiddleware } from '../../hosts/koa/index.js';
import { demoSeed } from '../standalone/demo-seed.js';

/** An existing Koa application that gains the notification API under `/notifications`. */
export async function createKoaApp(): Promise<{ app: Koa; notifier: Notifier }> {
  const storage = memoryStorage();
  const notifier = createNotifier({
    storage,
    transports: [inboxTransport()],
    callbacks: httpCallbacks(),
  });
  await notifier.seed(demoSeed);

  const app = new Koa();
  // Before any body parser: the middleware needs the raw bytes.
  app.use(notifyMiddleware(notifier, { prefix: '/notifications' }));
  app.use(async (ctx) => {
    if (ctx.path === '/hello') ctx.body = { hello: 'world' };
  });
  return { app, notifier };
}
