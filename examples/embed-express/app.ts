// In an application of your own, import from the package instead:
//   import { createNotifier } from 'chat-notify'; import { notifyRouter } from 'chat-notify/express'; ...
import express, { type Express } from 'express';
import { httpCallbacks } from '../../adapters/callbacks/index.js';
import { inboxTransport } from '../../adapters/chat/inbox/index.js';
import { memoryStorage } from '../../adapters/storage/memory/index.js';
import { createNotifier, type Notifier } from '../../core/index.js';
import { notifyRouter } from '../../hosts/express/index.js';
import { demoSeed } from '../standalone/demo-seed.js';

/** An existing Express application that gains the notification API under `/notifications`. */
export async function createExpressApp(): Promise<{ app: Express; notifier: Notifier }> {
  const storage = memoryStorage();
  const notifier = createNotifier({
    storage,
    transports: [inboxTransport()],
    callbacks: httpCallbacks(),
  });
  await notifier.seed(demoSeed);

  const app = express();
  // Before the first route or middleware: Express matches the mount path regardless of case
  // otherwise, and the API's paths are matched exactly as sent.
  app.set('case sensitive routing', true);
  // Before any body parser: the router needs the raw bytes.
  app.use('/notifications', notifyRouter(notifier));
  app.use(express.json());
  app.post('/deployments', (req, res) => {
    res.json({ deploying: req.body });
  });
  return { app, notifier };
}
