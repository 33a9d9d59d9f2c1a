import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const biome = resolve('node_modules/.bin/biome');
/** A scratch tree holding the project's biome.json, so that fixtures sit at the paths its rules name. */
const scratch = mkdtempSync(join(tmpdir(), 'chat-notify-lint-'));
const config = JSON.parse(readFileSync('biome.json', 'utf8')) as Record<string, unknown>;
delete config.$schema;
writeFileSync(join(scratch, 'biome.json'), JSON.stringify(config));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * Runs the project's linter on one source text as if it stood at `path`, the way `npm run lint`
 * sees a file there. Answers whether the import-boundary rule fired.
 */
function boundaryViolation(path: string, source: string): boolean {
  const file = join(scratch, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, source);
  const result = spawnSync(biome, ['lint', path], { cwd: scratch, encoding: 'utf8' });
  rmSync(file);
  const output = `${result.stdout}${result.stderr}`;
  if (result.status !== 0 && !output.includes('noRestrictedImports')) {
    throw new Error(`biome failed for another reason:\n${output}`);
  }
  return output.includes('noRestrictedImports');
}

const uses = (specifier: string) => `import { thing } from '${specifier}';\nexport const used = thing;\n`;

describe('import boundaries (npm run lint)', () => {
  it.each([
    ['core/use-cases/x.ts', '../../adapters/storage/redis/index.js', 'the core importing an adapter'],
    ['core/use-cases/x.ts', '../../hosts/express/index.js', 'the core importing a host'],
    ['core/use-cases/x.ts', '../../client/index.js', 'the core importing the client'],
    ['core/x.ts', '@slack/web-api', 'the core importing a platform SDK'],
    ['core/x.ts', '@microsoft/agents-hosting', 'the core importing a platform SDK'],
    ['core/x.ts', 'redis', 'the core importing a storage client'],
    ['core/x.ts', 'mongodb', 'the core importing a storage client'],
    ['core/x.ts', 'express', 'the core importing a web framework'],
    ['adapters/storage/redis/x.ts', '../../../core/errors.js', 'an adapter reaching into the core'],
    [
      'adapters/chat/slack/x.ts',
      '../../../core/ports/chat-transport.js',
      'an adapter reaching into the core',
    ],
    ['hosts/koa/x.ts', '../../core/http/handler.js', 'a host reaching into the core'],
    ['account/x.ts', '../core/http/handler.js', 'the account pages reaching into the core'],
    ['core/x.ts', '../account/index.js', 'the core importing the account pages'],
    ['client/x.ts', '../core/notifier.js', 'the client importing the service'],
  ])('refuses %s importing %s (%s)', (path, specifier) => {
    expect(boundaryViolation(path, uses(specifier))).toBe(true);
  });

  it.each([
    ['adapters/storage/redis/x.ts', '../../../core/adapter-kit.js'],
    ['adapters/chat/slack/x.ts', '../../../core/index.js'],
    ['hosts/express/x.ts', '../../core/index.js'],
    ['client/x.ts', '../core/schemas/responses.js'],
    ['core/use-cases/x.ts', '../ports/storage.js'],
    ['adapters/storage/redis/x.ts', 'redis'],
  ])('allows %s importing %s', (path, specifier) => {
    expect(boundaryViolation(path, uses(specifier))).toBe(false);
  });
});
