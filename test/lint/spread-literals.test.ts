import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * Where every send, status read, click and timeout passes: the core's use cases, request machine,
 * storage kit, ports and domain, and the memory and Redis stores.
 */
const hotPaths = [
  'core/use-cases',
  'core/request',
  'core/storage-kit',
  'core/ports',
  'core/domain',
  'adapters/storage/memory',
  'adapters/storage/redis',
];

/**
 * The object literals of `source` that start with a spread and go on with more properties, as
 * `file:line: text`. On Node 20's V8 such a literal takes a slow path (V8 issue 11536): it allocates
 * several times the object and leaves part of it in the old generation (docs/performance.md).
 */
function spreadLedLiterals(file: string, source: string): string[] {
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isObjectLiteralExpression(node) &&
      node.properties.length > 1 &&
      node.properties[0] !== undefined &&
      ts.isSpreadAssignment(node.properties[0])
    ) {
      const { line } = tree.getLineAndCharacterOfPosition(node.getStart());
      found.push(`${file}:${line + 1}: ${node.getText().replace(/\s+/g, ' ').slice(0, 80)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return found;
}

const sourcesUnder = (directory: string): string[] =>
  readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(directory, name));

describe('object literals on the hot paths', () => {
  it('finds a literal that starts with a spread and goes on, and none that starts otherwise', () => {
    const source = [
      'const a = { ...x, b: 1 };',
      'const c = { b: 1, ...x };',
      'const d = { ...x };',
      'const e = f({ ...x, ...(y ? { g } : {}) });',
    ].join('\n');
    expect(spreadLedLiterals('fixture.ts', source)).toEqual([
      'fixture.ts:1: { ...x, b: 1 }',
      'fixture.ts:4: { ...x, ...(y ? { g } : {}) }',
    ]);
  });

  it('has none that starts with a spread and goes on with more properties', () => {
    const found = hotPaths
      .flatMap(sourcesUnder)
      .flatMap((file) => spreadLedLiterals(file, readFileSync(file, 'utf8')));
    expect(found).toEqual([]);
  });
});
