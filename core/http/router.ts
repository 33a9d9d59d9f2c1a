import { errorResponse } from './responses.js';
import type { HttpResponse, Route } from './types.js';

/** A route matched by method and path, or the 405 answer for a path served with other methods. */
export type RouteMatch =
  | { route: Route; params: Readonly<Record<string, string>> }
  | { refusal: HttpResponse };

/** A segment of a route's path: a literal matched byte for byte, or a parameter's name. */
type Segment = { literal: string } | { param: string };

interface CompiledRoute {
  route: Route;
  segments: Segment[];
}

function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** What a route without parameters matches with; never written to. */
const noParams: Readonly<Record<string, string>> = Object.freeze({});

/** Where the segment of `path` that starts at `start` ends: at the next `/`, or the path's end. */
const segmentEnd = (path: string, start: number): number => {
  const slash = path.indexOf('/', start);
  return slash === -1 ? path.length : slash;
};

/** How many segments a path that starts with `/` has: `/a//b/` has four. */
const segmentCount = (path: string): number => {
  let count = 1;
  for (let slash = path.indexOf('/', 1); slash !== -1; slash = path.indexOf('/', slash + 1)) count += 1;
  return count;
};

/**
 * The parameters of `path` under `pattern`, of as many segments, or null when it does not match;
 * built only for a match. The path is walked in place rather than split: a status read is routed
 * without allocating its segments.
 */
function matchPath(pattern: readonly Segment[], path: string): Readonly<Record<string, string>> | null {
  let start = 1;
  for (const segment of pattern) {
    const end = segmentEnd(path, start);
    if (
      'literal' in segment &&
      (end - start !== segment.literal.length || !path.startsWith(segment.literal, start))
    ) {
      return null;
    }
    start = end + 1;
  }
  let params: Record<string, string> | null = null;
  start = 1;
  for (const segment of pattern) {
    const end = segmentEnd(path, start);
    if ('param' in segment) {
      const decoded = decodeSegment(path.slice(start, end));
      // A dot segment is a step in the path, which a proxy in front may resolve: never a value.
      if (decoded === '' || decoded === '.' || decoded === '..') return null;
      params ??= {};
      params[segment.param] = decoded;
    }
    start = end + 1;
  }
  return params ?? noParams;
}

const compile = (route: Route): CompiledRoute => ({
  route,
  segments: route.path
    .slice(1)
    .split('/')
    .map((segment) => (segment.startsWith(':') ? { param: segment.slice(1) } : { literal: segment })),
});

/**
 * Finds the route for a method and path; null when no route has that path (the host passes it on).
 * A HEAD is routed as a GET.
 * Literal segments match only themselves, byte for byte (no decoding, no dot segments, no empty
 * segments skipped), and a `:name` segment matches one non-empty segment, percent-decoded.
 */
export function createRouter(routes: readonly Route[]): (method: string, path: string) => RouteMatch | null {
  // Only routes of as many segments as the path can match it: a request tries those alone, in the
  // order they were given.
  const bySegmentCount = new Map<number, CompiledRoute[]>();
  for (const compiled of routes.map(compile)) {
    const count = compiled.segments.length;
    bySegmentCount.set(count, [...(bySegmentCount.get(count) ?? []), compiled]);
  }
  return (method, path) => {
    const candidates = bySegmentCount.get(segmentCount(path));
    if (candidates === undefined) return null;
    // Built only for a path served with other methods: most requests find their route first.
    let allowed: Set<string> | null = null;
    for (const { route, segments: pattern } of candidates) {
      const params = matchPath(pattern, path);
      if (params === null) continue;
      // HEAD is answered wherever GET is (RFC 9110 §9.3.2): the same status and headers; the
      // host's server leaves the body out.
      if (route.method === method || (route.method === 'GET' && method === 'HEAD')) return { route, params };
      allowed ??= new Set<string>();
      allowed.add(route.method);
      if (route.method === 'GET') allowed.add('HEAD');
    }
    if (allowed === null) return null;
    const allow = [...allowed].join(', ');
    return {
      refusal: errorResponse(405, `Method ${method} is not allowed here; use ${allow}`, { allow }),
    };
  };
}
