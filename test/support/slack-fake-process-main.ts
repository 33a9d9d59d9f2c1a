/** The child process of `slack-fake-process.ts`: a fake Slack that obeys its parent's commands. */
import { type FakeSlack, startFakeSlack } from './fake-slack.js';
import type { FakeSlackProcessCommand, FakeSlackProcessReply } from './slack-fake-process.js';

const reply = (message: FakeSlackProcessReply): void => {
  process.send?.(message);
};
let slack: FakeSlack | null = null;
// The parent is gone, or done with the fake (after `close`): nothing is left to serve.
process.on('disconnect', () => process.exit(0));
process.on('message', (command: FakeSlackProcessCommand) => {
  if (command.kind === 'start') {
    void startFakeSlack(command.workspaces).then((started) => {
      slack = started;
      reply({ kind: 'listening', apiUrl: started.apiUrl });
    });
  } else if (command.kind === 'set-latency') {
    slack?.setLatency(command.ms);
    reply({ kind: 'done' });
  } else {
    void (slack?.close() ?? Promise.resolve()).then(() => {
      reply({ kind: 'done' });
      process.disconnect();
    });
  }
});
