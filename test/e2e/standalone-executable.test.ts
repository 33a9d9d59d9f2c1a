import { spawn } from 'node:child_process';
import { access, constants, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { basename, join } from 'node:path';
import { build } from 'tsup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { cliBuild } from '../../tsup.config.js';
import { exitOf, watchLog } from '../support/standalone-process.js';

// Built beside node_modules so that the bundle resolves the package's dependencies as it would installed.
let outDir: string;
let executable: string;

beforeAll(async () => {
  await mkdir(join('node_modules', '.cache'), { recursive: true });
  outDir = await mkdtemp(join(process.cwd(), 'node_modules', '.cache', 'chat-notify-cli-'));
  await build({ ...cliBuild, config: false, outDir, silent: true });
  executable = join(outDir, basename(packageJson.bin['chat-notify']));
}, 60_000);

afterAll(async () => {
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

describe('the chat-notify executable', () => {
  it('is dist/bin/chat-notify.js, an executable node script', async () => {
    expect(packageJson.bin).toEqual({ 'chat-notify': './dist/bin/chat-notify.js' });
    expect(cliBuild.outDir).toBe('dist/bin');
    expect(packageJson.files).toContain('dist');
    expect((await readFile(executable, 'utf8')).startsWith('#!/usr/bin/env node\n')).toBe(true);
    await access(executable, constants.X_OK);
  });

  it('needs no more than the package dependencies, and redis or mongodb only when selected', async () => {
    const eager = new Set<string>();
    const lazy = new Set<string>();
    const seen = new Set<string>();
    const follow = async (file: string): Promise<void> => {
      if (seen.has(file)) return;
      seen.add(file);
      const code = await readFile(join(outDir, file), 'utf8');
      for (const [, specifier = ''] of code.matchAll(/^(?:import|export)\s[^;]*?from\s*"([^"]+)"/gm)) {
        if (specifier.startsWith('./')) await follow(specifier.slice(2));
        else eager.add(specifier);
      }
      for (const [, specifier = ''] of code.matchAll(/\bimport\("([^"]+)"\)/g))
        if (!specifier.startsWith('./')) lazy.add(specifier);
    };
    await follow(basename(executable));
    const root = (specifier: string) =>
      specifier
        .split('/')
        .slice(0, specifier.startsWith('@') ? 2 : 1)
        .join('/');
    const outside = [...eager]
      .map(root)
      .filter(
        (name) => !builtinModules.includes(name.replace(/^node:/, '')) && !(name in packageJson.dependencies),
      );
    expect(outside).toEqual([]);
    expect(lazy).toEqual(new Set(['redis', 'mongodb']));
  });

  it('starts the standalone service, takes --wait-for-storage, and stops on SIGTERM', async () => {
    const child = spawn(executable, ['--wait-for-storage', '5'], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const log = watchLog(child);
      const ready = await log.next((line) => line.message === 'ready');
      const health = await fetch(`http://127.0.0.1:${ready.port}/healthz`);
      expect(await health.json()).toEqual({ status: 'ok' });
      child.kill('SIGTERM');
      expect(await exitOf(child)).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('explains its usage on --help and refuses unknown flags', async () => {
    const help = spawn(executable, ['--help'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    help.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    expect(await exitOf(help)).toBe(0);
    expect(text).toMatch(/^Usage: chat-notify \[--wait-for-storage <seconds>\]/);

    const wrong = spawn(executable, ['--wait-for-storag', '5'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const log = watchLog(wrong);
    expect(await exitOf(wrong)).toBe(1);
    expect(String(log.lines.find((line) => line.level === 'error')?.error)).toMatch(/--wait-for-storag\b/);
  });
});
