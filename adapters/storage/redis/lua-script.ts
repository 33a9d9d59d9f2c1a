import { createHash } from 'node:crypto';

/** A Lua script and the SHA-1 under which Redis caches it. */
export interface LuaScript {
  readonly source: string;
  readonly sha: string;
}

/** Wraps a script's source; the digest is computed once, here, so EVALSHA costs nothing extra. */
export function luaScript(source: string): LuaScript {
  return { source, sha: createHash('sha1').update(source, 'utf8').digest('hex') };
}
