/**
 * The data-model diagram, as R's `dm_draw()`: one box per table listing its key columns (or all
 * columns), arrows from foreign-key columns to the referenced primary key. Three renderings:
 * Graphviz DOT and Mermaid (text for other tools), and SVG laid out here, in-process, with a
 * small layered layout (no Graphviz needed).
 */

import { TABLES, sqlType, type ColumnDef, type ForeignKeyDef, type TableDef } from './schema.js';

export type DiagramView = 'keys' | 'all';
export type DiagramFormat = 'dot' | 'mermaid' | 'svg';

export interface DiagramOptions {
  /** `keys` (default, like dm_draw's `keys_only`): primary, foreign and unique key columns; `all`: every column. */
  view?: DiagramView;
  /** Show column types (default true). */
  types?: boolean;
}

/** Table colour groups, like `dm_set_colors()`. */
const GROUP_COLORS: Record<string, string> = {
  profile: '#dbe9f6',
  sample: '#dcefd9',
  code: '#fbefcf',
  extension: '#e6e6e6',
};

function groupOf(t: TableDef): string {
  if (t.name.startsWith('extension_')) return 'extension';
  if (t.name.startsWith('sample') || t.name === 'labels') return t.name === 'sample_types' ? 'profile' : 'sample';
  if (['functions', 'locations', 'location_lines', 'mappings'].includes(t.name)) return 'code';
  return 'profile';
}

function isFk(t: TableDef, c: string): boolean {
  return t.foreignKeys.some((f) => f.columns.includes(c));
}

function shownColumns(t: TableDef, view: DiagramView): ColumnDef[] {
  return t.columns.filter((c) => view === 'all' || t.primaryKey.includes(c.name) || isFk(t, c.name) || t.unique.some((u) => u.includes(c.name)));
}

function marks(t: TableDef, c: string): string[] {
  const m: string[] = [];
  if (t.primaryKey.includes(c)) m.push('PK');
  if (isFk(t, c)) m.push('FK');
  if (t.unique.some((u) => u.includes(c))) m.push('UK');
  return m;
}

/** The column an arrow starts from: the foreign key's own column (not the shared profile_id). */
function fkColumn(fk: ForeignKeyDef): { from: string; to: string } {
  const i = fk.columns.length > 1 ? fk.columns.findIndex((c) => c !== 'profile_id') : 0;
  return { from: fk.columns[i]!, to: fk.refColumns[i]! };
}

function xml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Graphviz DOT, as dm_draw produces (rankdir LR, HTML-like table nodes, column ports). */
export function diagramDot(options: DiagramOptions = {}): string {
  const view = options.view ?? 'keys';
  const types = options.types ?? true;
  const out: string[] = [];
  out.push('digraph dm {');
  out.push('  graph [rankdir=RL, fontname="Helvetica", nodesep=0.3, ranksep=0.8];');
  out.push('  node [shape=plaintext, fontname="Helvetica", fontsize=10];');
  out.push('  edge [color="#555555", arrowsize=0.7];');
  for (const t of TABLES) {
    const color = GROUP_COLORS[groupOf(t)]!;
    const rows = shownColumns(t, view).map((c) => {
      const m = marks(t, c.name);
      const label = (t.primaryKey.includes(c.name) ? `<U>${xml(c.name)}</U>` : xml(c.name)) + (types ? ` <FONT COLOR="#666666">${xml(sqlType(c, 'postgresql'))}</FONT>` : '');
      return `      <TR><TD ALIGN="LEFT" PORT="${xml(c.name)}">${label}${m.length ? ` <FONT COLOR="#1f4e79">${m.join(',')}</FONT>` : ''}</TD></TR>`;
    });
    out.push(`  ${JSON.stringify(t.name)} [label=<`);
    out.push(`    <TABLE BORDER="1" CELLBORDER="0" CELLSPACING="0" CELLPADDING="3" BGCOLOR="${color}">`);
    out.push(`      <TR><TD BGCOLOR="#b0b8c8"><B>${xml(t.name)}</B></TD></TR>`);
    out.push(...rows);
    out.push('    </TABLE>>];');
  }
  for (const t of TABLES) {
    for (const fk of t.foreignKeys) {
      const { from, to } = fkColumn(fk);
      out.push(`  ${JSON.stringify(t.name)}:${JSON.stringify(from)} -> ${JSON.stringify(fk.table)}:${JSON.stringify(to)};`);
    }
  }
  out.push('}');
  return out.join('\n') + '\n';
}

/** Mermaid `erDiagram` text (renders on GitHub, in Markdown previews...). */
export function diagramMermaid(options: DiagramOptions = {}): string {
  const view = options.view ?? 'keys';
  const out: string[] = ['erDiagram'];
  for (const t of TABLES) {
    for (const fk of t.foreignKeys) {
      // parent ||--o{ child : "columns"
      out.push(`  ${fk.table} ||--o{ ${t.name} : "${fk.columns.join(', ')}"`);
    }
  }
  for (const t of TABLES) {
    out.push(`  ${t.name} {`);
    for (const c of shownColumns(t, view)) {
      const m = marks(t, c.name);
      out.push(`    ${sqlType(c, 'postgresql').replace(/ /g, '_')} ${c.name}${m.length ? ' ' + m.join(', ') : ''}`);
    }
    out.push('  }');
  }
  return out.join('\n') + '\n';
}

interface Box {
  table: TableDef;
  columns: ColumnDef[];
  x: number;
  y: number;
  w: number;
  h: number;
  rank: number;
}

const ROW_H = 18;
const TITLE_H = 22;
const CHAR_W = 7;
const PAD = 8;
const RANK_GAP = 90;
const BOX_GAP = 18;
const MARGIN = 20;

/** Rank of each table: 0 for tables without parents, else 1 + the highest parent rank. */
function ranks(): Map<string, number> {
  const r = new Map<string, number>();
  const visit = (t: TableDef): number => {
    const known = r.get(t.name);
    if (known !== undefined) return known;
    let rank = 0;
    for (const fk of t.foreignKeys) if (fk.table !== t.name) rank = Math.max(rank, visit(TABLES.find((x) => x.name === fk.table)!) + 1);
    r.set(t.name, rank);
    return rank;
  };
  for (const t of TABLES) visit(t);
  return r;
}

/** Lays the boxes out: one column per rank (parents left), boxes stacked in schema order. */
export function diagramLayout(options: DiagramOptions = {}): { boxes: Box[]; width: number; height: number } {
  const view = options.view ?? 'keys';
  const types = options.types ?? true;
  const rk = ranks();
  const byRank: Box[][] = [];
  for (const t of TABLES) {
    const columns = shownColumns(t, view);
    const textW = Math.max(t.name.length + 2, ...columns.map((c) => rowText(t, c, types).length));
    const box: Box = { table: t, columns, x: 0, y: 0, w: textW * CHAR_W + 2 * PAD, h: TITLE_H + columns.length * ROW_H + 4, rank: rk.get(t.name)! };
    (byRank[box.rank] ??= []).push(box);
  }
  let x = MARGIN;
  let height = 0;
  const boxes: Box[] = [];
  const placed = new Map<string, Box>();
  for (const col of byRank) {
    if (!col) continue;
    // Barycentric ordering: a box goes near the boxes it references (ignoring `profiles`, which
    // everything references), which keeps arrows short and mostly uncrossed. Stable: ties keep
    // schema order.
    const bary = (b: Box) => {
      const ys = b.table.foreignKeys.filter((f) => f.table !== 'profiles').map((f) => placed.get(f.table)).filter((p): p is Box => p !== undefined).map((p) => p.y + p.h / 2);
      return ys.length ? ys.reduce((a, y) => a + y, 0) / ys.length : -1;
    };
    const order = col.map((b, i) => ({ b, i, k: bary(b) }));
    order.sort((p, q) => p.k - q.k || p.i - q.i);
    col.splice(0, col.length, ...order.map((o) => o.b));
    const w = Math.max(...col.map((b) => b.w));
    let y = MARGIN;
    for (const o of order) {
      const b = o.b;
      b.x = x;
      // Level with the boxes it references when there is room, else right below the previous one.
      b.y = Math.round(Math.max(y, o.k >= 0 ? o.k - b.h / 2 : y));
      y = b.y;
      b.w = w;
      y += b.h + BOX_GAP;
      boxes.push(b);
      placed.set(b.table.name, b);
    }
    height = Math.max(height, y - BOX_GAP + MARGIN);
    x += w + RANK_GAP;
  }
  return { boxes, width: x - RANK_GAP + MARGIN, height };
}

function rowText(t: TableDef, c: ColumnDef, types: boolean): string {
  const m = marks(t, c.name);
  return `${c.name}${types ? ' ' + sqlType(c, 'postgresql').toLowerCase() : ''}${m.length ? '  ' + m.join(',') : ''}`;
}

/** The diagram as a standalone SVG document. */
export function diagramSvg(options: DiagramOptions = {}): string {
  const types = options.types ?? true;
  const { boxes, width, height } = diagramLayout(options);
  const byName = new Map(boxes.map((b) => [b.table.name, b]));
  const rowY = (b: Box, col: string) => {
    const i = b.columns.findIndex((c) => c.name === col);
    return b.y + TITLE_H + (i < 0 ? -TITLE_H / 2 : i * ROW_H + ROW_H / 2);
  };
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="11">`);
  out.push('  <title>profkit dm-export data model</title>');
  out.push('  <defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>');
  out.push('  <g class="edges" fill="none" stroke="#555" stroke-width="1">');
  for (const b of boxes) {
    for (const fk of b.table.foreignKeys) {
      const parent = byName.get(fk.table)!;
      const { from, to } = fkColumn(fk);
      const x1 = b.x;
      const y1 = rowY(b, from);
      const x2 = parent.x + parent.w;
      const y2 = rowY(parent, to);
      const dx = Math.max(30, (x1 - x2) / 2);
      out.push(`    <path class="fk" data-from="${xml(b.table.name)}.${xml(from)}" data-to="${xml(fk.table)}.${xml(to)}" d="M ${x1} ${y1} C ${x1 - dx} ${y1}, ${x2 + dx} ${y2}, ${x2} ${y2}" marker-end="url(#arrow)"/>`);
    }
  }
  out.push('  </g>');
  for (const b of boxes) {
    const color = GROUP_COLORS[groupOf(b.table)]!;
    out.push(`  <g class="table" id="table-${xml(b.table.name)}">`);
    out.push(`    <rect x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}" fill="${color}" stroke="#333"/>`);
    out.push(`    <rect x="${b.x}" y="${b.y}" width="${b.w}" height="${TITLE_H}" fill="#b0b8c8" stroke="#333"/>`);
    out.push(`    <text x="${b.x + PAD}" y="${b.y + 15}" font-weight="bold">${xml(b.table.name)}</text>`);
    b.columns.forEach((c, i) => {
      const pk = b.table.primaryKey.includes(c.name);
      out.push(`    <text x="${b.x + PAD}" y="${b.y + TITLE_H + i * ROW_H + 13}"${pk ? ' text-decoration="underline"' : ''}>${xml(rowText(b.table, c, types))}</text>`);
    });
    out.push('  </g>');
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}

export function diagram(format: DiagramFormat, options: DiagramOptions = {}): string {
  return format === 'dot' ? diagramDot(options) : format === 'mermaid' ? diagramMermaid(options) : diagramSvg(options);
}
