import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

/**
 * The standalone host loading a platform's adapter whose SDK is not installed, as in an application
 * that installed the package without its optional peers. In a Node process of its own: Node's loader,
 * not the test runner's, says what is missing. The adapter stands for one whose SDK import fails.
 */
async function loadAdapter(imports: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'chat-notify-sdk-'));
  const adapter = join(dir, 'adapter.mjs');
  writeFileSync(adapter, `import '${imports}';\nexport const transport = 1;\n`);
  const script = `
    import { platformAdapter } from './examples/standalone/chat-transports.ts';
    await platformAdapter('SLACK_SIGNING_SECRET', ['chat-notify-no-such-sdk'], () => import(${JSON.stringify(pathToFileURL(adapter).href)}))
      .then(() => console.log('loaded'), (error) => console.log(error.message));
  `;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
  return stdout.trim();
}

describe('a platform turned on whose SDK is not installed', () => {
  it('stops the start naming the setting and what to install', async () => {
    expect(await loadAdapter('chat-notify-no-such-sdk')).toBe(
      'SLACK_SIGNING_SECRET is set, but its SDK is not installed: npm install chat-notify-no-such-sdk',
    );
  });

  it('leaves any other missing module to its own error', async () => {
    expect(await loadAdapter('chat-notify-another-missing-module')).toMatch(
      /^Cannot find package 'chat-notify-another-missing-module'/,
    );
  });
});
