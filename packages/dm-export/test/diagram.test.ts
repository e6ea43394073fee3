import { describe, expect, it } from 'vitest';
import { TABLES, diagram, diagramDot, diagramLayout, diagramMermaid, diagramSvg } from '../src/index.js';

const fkCount = TABLES.reduce((n, t) => n + t.foreignKeys.length, 0);

describe('data-model diagram (like R dm_draw)', () => {
  it('DOT: one node per table with key columns as ports, one edge per foreign key to the referenced column', () => {
    const dot = diagramDot();
    expect(dot.startsWith('digraph dm {')).toBe(true);
    for (const t of TABLES) {
      expect(dot).toContain(`"${t.name}" [label=<`);
      for (const k of t.primaryKey) expect(dot).toMatch(new RegExp(`PORT="${k}"><U>${k}</U>`));
    }
    const edges = dot.split('\n').filter((l) => l.includes(' -> '));
    expect(edges).toHaveLength(fkCount);
    expect(edges).toContain('  "sample_locations":"location_id" -> "locations":"location_id";');
    expect(edges).toContain('  "locations":"function_id" -> "functions":"function_id";');
    // keys view hides non-key columns; all view shows them
    expect(dot).not.toContain('PORT="system_name"');
    expect(diagramDot({ view: 'all' })).toContain('PORT="system_name"');
    // balanced braces/brackets: a syntactically closed graph
    expect((dot.match(/\{/g) ?? []).length).toBe((dot.match(/\}/g) ?? []).length);
  });

  it('Mermaid: an erDiagram with every table, its keys and every relationship', () => {
    const m = diagramMermaid();
    expect(m.split('\n')[0]).toBe('erDiagram');
    for (const t of TABLES) expect(m).toContain(`  ${t.name} {`);
    expect(m.split('\n').filter((l) => l.includes('||--o{'))).toHaveLength(fkCount);
    expect(m).toContain('  samples ||--o{ sample_locations : "profile_id, sample_id"');
    expect(m).toMatch(/BIGINT location_id PK, FK/);
    expect(m).toMatch(/INTEGER position UK\n/);
    expect(m).toMatch(/TEXT adapter PK, UK\n/);
  });

  it('SVG: a well-formed document, non-overlapping boxes, arrows from the FK row to the PK row', () => {
    const svg = diagramSvg();
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    // Tags balance (a cheap well-formedness check; no XML parser dependency).
    const open = (svg.match(/<(g|svg|defs|marker|title)[\s>]/g) ?? []).length;
    const close = (svg.match(/<\/(g|svg|defs|marker|title)>/g) ?? []).length;
    expect(open).toBe(close);
    const { boxes, width, height } = diagramLayout();
    expect(boxes).toHaveLength(TABLES.length);
    for (const a of boxes) {
      expect(a.x + a.w).toBeLessThanOrEqual(width);
      expect(a.y + a.h).toBeLessThanOrEqual(height);
      for (const b of boxes) {
        if (a === b) continue;
        const overlap = a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
        expect(overlap, `${a.table.name} overlaps ${b.table.name}`).toBe(false);
      }
    }
    const byName = new Map(boxes.map((b) => [b.table.name, b]));
    const paths = [...svg.matchAll(/<path class="fk" data-from="([^"]+)" data-to="([^"]+)" d="M ([\d.]+) ([\d.]+) C [^,]+, [^,]+, ([\d.]+) ([\d.]+)"/g)];
    expect(paths).toHaveLength(fkCount);
    for (const [, from, to, x1, y1, x2, y2] of paths) {
      const child = byName.get(from!.split('.')[0]!)!;
      const parent = byName.get(to!.split('.')[0]!)!;
      // starts on the child's left edge inside the box, ends on the parent's right edge inside the box
      expect(Number(x1)).toBe(child.x);
      expect(Number(y1)).toBeGreaterThan(child.y);
      expect(Number(y1)).toBeLessThan(child.y + child.h);
      expect(Number(x2)).toBe(parent.x + parent.w);
      expect(Number(y2)).toBeGreaterThan(parent.y);
      expect(Number(y2)).toBeLessThan(parent.y + parent.h);
      // parents are laid out left of their children
      expect(parent.x + parent.w).toBeLessThan(child.x);
    }
    for (const t of TABLES) expect(svg).toContain(`id="table-${t.name}"`);
  });

  it('escapes nothing it should not and dispatches by format', () => {
    expect(diagram('dot')).toBe(diagramDot());
    expect(diagram('mermaid', { view: 'all' })).toBe(diagramMermaid({ view: 'all' }));
    expect(diagram('svg')).toBe(diagramSvg());
    expect(diagramSvg({ view: 'all' }).length).toBeGreaterThan(diagramSvg().length);
  });
});
