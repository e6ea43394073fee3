import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagramMermaid } from '../src/index.js';
import { QUERIES_FILE } from '../src/queries.js';
import { repoRoot } from './helpers.js';

const doc = readFileSync(join(repoRoot, 'docs/formats/dm-export.md'), 'utf8');

function block(begin: string): string {
  const start = doc.indexOf(begin);
  expect(start, begin).toBeGreaterThanOrEqual(0);
  const fenceStart = doc.indexOf('\n', doc.indexOf('```', start)) + 1;
  const fenceEnd = doc.indexOf('```\n<!-- END', fenceStart);
  return doc.slice(fenceStart, fenceEnd);
}

describe('docs/formats/dm-export.md', () => {
  it('embeds sql/queries.sql verbatim', () => {
    expect(block('<!-- BEGIN embedded: packages/dm-export/sql/queries.sql -->')).toBe(readFileSync(QUERIES_FILE, 'utf8'));
  });

  it('embeds the current Mermaid diagram', () => {
    expect(block('<!-- BEGIN generated: profkit dm-export diagram --format mermaid -->')).toBe(diagramMermaid());
  });
});
