/**
 * DOT to SVG and PNG without a Graphviz install: Graphviz compiled to WebAssembly
 * (`@viz-js/viz`, the `dot` layout engine) for SVG, and resvg compiled to WebAssembly
 * (`@resvg/resvg-wasm`) to rasterise that SVG. Both are imported only when `graph --format svg`
 * or `png` runs (several MB of WebAssembly: never on the start-up path of other commands), and
 * live in the CLI, not in `@profkit/core`, whose browser bundle stays free of them.
 */

import { readFile, readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ErrorCodes, ProfkitError } from '@profkit/core/node';

/** Graphviz's `dot -Tsvg` of `dot`, by the WebAssembly build. */
export async function dotToSvg(dot: string): Promise<string> {
  const { instance } = await import('@viz-js/viz');
  const viz = await instance();
  const r = viz.render(dot, { format: 'svg', engine: 'dot' });
  if (r.status !== 'success') {
    const why = r.errors.map((e) => e.message).join('; ');
    throw new ProfkitError(ErrorCodes.UNSUPPORTED, `Graphviz (WebAssembly) could not lay out the graph: ${why}`, { rule: 'the DOT text must be valid Graphviz input' });
  }
  return r.output;
}

/**
 * Fonts tried for the PNG's text, in order, with their family names: Graphviz asks for Times
 * (serif); resvg in WebAssembly cannot look up system fonts itself, so the files are read here.
 */
const FONT_CANDIDATES: readonly { file: RegExp; family: string }[] = [
  { file: /^LiberationSerif-Regular\.ttf$/, family: 'Liberation Serif' },
  { file: /^(?:Times New Roman|times)\.ttf$/i, family: 'Times New Roman' },
  { file: /^DejaVuSerif\.ttf$/, family: 'DejaVu Serif' },
  { file: /^LiberationSans-Regular\.ttf$/, family: 'Liberation Sans' },
  { file: /^DejaVuSans\.ttf$/, family: 'DejaVu Sans' },
  { file: /^(?:Arial|arial)\.ttf$/, family: 'Arial' },
];

/** Where operating systems keep fonts. */
function fontDirs(): string[] {
  const dirs = ['/usr/share/fonts', '/usr/local/share/fonts', join(homedir(), '.fonts'), join(homedir(), '.local/share/fonts'), '/System/Library/Fonts', '/Library/Fonts'];
  if (process.env.WINDIR) dirs.push(join(process.env.WINDIR, 'Fonts'));
  return dirs;
}

/** The font files under `dir` (a few levels deep), by base name; missing folders give none. */
async function fontFiles(dir: string, depth: number, found: Map<string, string>): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (e.isDirectory() && depth > 0) await fontFiles(join(dir, e.name), depth - 1, found);
    else if (/\.(ttf|otf)$/i.test(e.name) && !found.has(e.name)) found.set(e.name, join(dir, e.name));
  }
}

/** The first font of `FONT_CANDIDATES` installed, or undefined. */
async function findFont(): Promise<{ bytes: Uint8Array; family: string } | undefined> {
  const found = new Map<string, string>();
  for (const dir of fontDirs()) await fontFiles(dir, 3, found);
  for (const c of FONT_CANDIDATES) {
    for (const [name, path] of found) if (c.file.test(name)) return { bytes: new Uint8Array(await readFile(path)), family: c.family };
  }
  return undefined;
}

let resvgReady: Promise<typeof import('@resvg/resvg-wasm')> | undefined;

/** resvg's WebAssembly module, compiled once per process. */
function resvg(): Promise<typeof import('@resvg/resvg-wasm')> {
  resvgReady ??= (async () => {
    const mod = await import('@resvg/resvg-wasm');
    const wasm = await readFile(createRequire(import.meta.url).resolve('@resvg/resvg-wasm/index_bg.wasm'));
    await mod.initWasm(wasm);
    return mod;
  })();
  return resvgReady;
}

export interface PngResult {
  png: Uint8Array;
  /** Set when no font was found: the boxes and arrows are drawn, the text is not. */
  noFont?: boolean;
}

/** `svg` rasterised to PNG (white background, 1 px per SVG unit, as `dot -Tpng` draws at 72 dpi). */
export async function svgToPng(svg: string): Promise<PngResult> {
  const { Resvg } = await resvg();
  const font = await findFont();
  const r = new Resvg(svg, {
    background: 'white',
    font: font
      ? { fontBuffers: [font.bytes], defaultFontFamily: font.family, serifFamily: font.family, sansSerifFamily: font.family }
      : { fontBuffers: [] },
  });
  try {
    const image = r.render();
    try {
      return { png: image.asPng(), ...(font ? {} : { noFont: true }) };
    } finally {
      image.free();
    }
  } finally {
    r.free();
  }
}
