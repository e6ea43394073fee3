/**
 * The built app (dist/www, made by scripts/build-app.mjs during `npm run build`): what the
 * server serves and `writeStaticSite` copies.
 */

import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ErrorCodes, ProfkitError } from '@profkit/core';

/** The folder of the built app: dist/www beside this module (dist/assets.js). */
export const APP_DIR = fileURLToPath(new URL('./www/', import.meta.url));

/** The files of the app, by name. */
export const APP_FILES = ['index.html', 'app.js', 'app.css', 'graph.js'] as const;

export interface AppAssets {
  indexHtml: string;
  appJs: Uint8Array;
  appCss: Uint8Array;
  /** The call graph's layout (Graphviz in WebAssembly), loaded by the page only for the graph view. */
  graphJs: Uint8Array;
}

export async function readAppAssets(): Promise<AppAssets> {
  try {
    const [indexHtml, appJs, appCss, graphJs] = await Promise.all([readFile(APP_DIR + 'index.html', 'utf8'), readFile(APP_DIR + 'app.js'), readFile(APP_DIR + 'app.css'), readFile(APP_DIR + 'graph.js')]);
    return { indexHtml, appJs, appCss, graphJs };
  } catch (e) {
    throw new ProfkitError(ErrorCodes.IO, `the web app is not built (${APP_DIR}): run \`npm run build -w @profkit/web\``, { file: APP_DIR, rule: 'profkit web needs the built app' }, { cause: e });
  }
}
