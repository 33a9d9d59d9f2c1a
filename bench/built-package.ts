/**
 * The library as an application installs it: the built package (`dist/`, what `npm run build`
 * writes and package.json exports), for the benchmarks whose figure is what an embedding
 * application gets. The sources through `tsx` run slower: its transform keeps every function's
 * name by wrapping each function it creates in a call that defines the name on it (esbuild's
 * `keepNames`), once per closure made, per request. The package is built first when `dist/` is
 * missing or older than a source, so that a benchmark never measures code that is not the
 * checkout's. Typed as the sources, which the package is built from.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** What the package is built from: the directories of tsup.config.ts's entries, and that file. */
const sources = ['core', 'adapters', 'hosts', 'account', 'client', 'testing', 'examples', 'tsup.config.ts'];

/** The latest modification time of `path`, or of any file under it. */
function newest(path: string): number {
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.mtimeMs;
  let latest = stats.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

function ensureBuilt(): void {
  const built = join(root, 'dist', 'index.js');
  const builtAt = existsSync(built) ? statSync(built).mtimeMs : Number.NEGATIVE_INFINITY;
  if (builtAt >= Math.max(...sources.map((source) => newest(join(root, source))))) return;
  console.log('dist/ is missing or older than the sources: building the package (npm run build).\n');
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, encoding: 'utf8' });
  if (build.error) throw new Error(`npm run build could not run: ${build.error.message}`);
  if (build.status !== 0) {
    throw new Error(`npm run build failed (exit ${build.status}):\n${build.stdout}${build.stderr}`);
  }
}

ensureBuilt();

const load = <Module>(entry: string): Promise<Module> =>
  import(pathToFileURL(join(root, 'dist', `${entry}.js`)).href) as Promise<Module>;

export const { createNotifier } = await load<typeof import('../core/index.js')>('index');
export const { memoryStorage } = await load<typeof import('../adapters/storage/memory/index.js')>('memory');
export const { redisStorage } = await load<typeof import('../adapters/storage/redis/index.js')>('redis');
export const { inboxTransport } = await load<typeof import('../adapters/chat/inbox/index.js')>('inbox');
export const { notifyRouter } = await load<typeof import('../hosts/express/index.js')>('express');
export const { notifyMiddleware } = await load<typeof import('../hosts/koa/index.js')>('koa');
