import type { z } from 'zod';

const pathText = (path: readonly PropertyKey[]): string =>
  path.reduce<string>(
    (text, segment) =>
      typeof segment === 'number'
        ? `${text}[${segment}]`
        : text === ''
          ? String(segment)
          : `${text}.${String(segment)}`,
    '',
  );

/** Zod issues as one `details` line that names each field path and its rule (docs/http-api.md#error-reference). */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .flatMap((issue) => {
      if (issue.code === 'unrecognized_keys') {
        return issue.keys.map((key) => `${pathText([...issue.path, key])}: is not a known field`);
      }
      const path = pathText(issue.path);
      return [path === '' ? `body: ${issue.message}` : `${path}: ${issue.message}`];
    })
    .join('; ');
}
