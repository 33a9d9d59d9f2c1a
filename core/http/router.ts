import { errorResponse } from './responses.js';
import type { HttpRequest, HttpResponse, Route } from './types.js';

interface CompiledRoute {
  route: Route;
  segments: string[];
}

function matchSegments(pattern: readonly string[], actual: readonly string[]): Record<string, string> | null {
  if (pattern.length !== actual.length) return null;
  const params: Record<string, string> = {};
  for (const [index, segment] of pattern.entries()) {
    const value = actual[index] ?? '';
    if (segment.startsWith(':')) {
      try {
        params[segment.slice(1)] = decodeURIComponent(value);
      } catch {
        params[segment.slice(1)] = value;
      }
    } else if (segment !== value) return null;
  }
  return params;
}

const split = (path: string) => path.split('/').filter((segment) => segment !== '');

/** Dispatches to the route whose method and path match; 404 and 405 in the error shape otherwise. */
export function createRouter(routes: readonly Route[]): (request: HttpRequest) => Promise<HttpResponse> {
  const compiled: CompiledRoute[] = routes.map((route) => ({ route, segments: split(route.path) }));
  return async (request) => {
    const segments = split(request.path);
    const matching = compiled.flatMap((entry) => {
      const params = matchSegments(entry.segments, segments);
      return params ? [{ route: entry.route, params }] : [];
    });
    if (matching.length === 0) return errorResponse(404, `No endpoint at ${request.path}`);
    const hit = matching.find((entry) => entry.route.method === request.method);
    if (!hit) {
      const allowed = [...new Set(matching.map((entry) => entry.route.method))].join(', ');
      return errorResponse(405, `Method ${request.method} is not allowed here; use ${allowed}`, { allow: allowed });
    }
    return hit.route.handle(request, hit.params);
  };
}
