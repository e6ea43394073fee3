/**
 * `profkit web --static DIR`: the app as a static site (index.html, app.js, app.css, graph.js) that opens
 * profiles the user drops or picks, entirely in the browser; from any web server or file://.
 */

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '@profkit/core/node';
import { readAppAssets } from './assets.js';

/** Writes the static site into `dir` (created if needed); returns the paths written. */
export async function writeStaticSite(dir: string, options: { signal?: AbortSignal } = {}): Promise<string[]> {
  const assets = await readAppAssets();
  await mkdir(dir, { recursive: true });
  const files: [string, Uint8Array][] = [
    ['index.html', new TextEncoder().encode(assets.indexHtml)],
    ['app.js', assets.appJs],
    ['app.css', assets.appCss],
    ['graph.js', assets.graphJs],
  ];
  const written: string[] = [];
  for (const [name, data] of files) {
    const path = join(dir, name);
    await writeFileAtomic(path, data, { signal: options.signal });
    written.push(path);
  }
  return written;
}
