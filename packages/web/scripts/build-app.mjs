// Builds the browser app of @profkit/web into dist/www (index.html, app.js, app.css) with
// esbuild: the Web Worker (src/app/worker.ts: core and every platform-neutral adapter) is bundled
// first and embedded into app.js as a string, so that the page starts it from a blob: URL and works
// from any origin, file:// included (browsers refuse workers from file:// URLs). Classic scripts
// (IIFE), not modules, for the same reason. The call graph's layout (Graphviz in WebAssembly,
// src/app/graph-layout.ts) is a script of its own, graph.js, which the page loads only when the
// graph view is shown: app.js, the first paint's script, stays small. Run by `npm run build`
// after `tsc -b`.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const out = join(root, 'dist/www');
const common = { bundle: true, format: 'iife', platform: 'browser', target: 'es2022', minify: true, legalComments: 'none', write: false, logLevel: 'warning' };

const worker = await build({ ...common, entryPoints: [join(root, 'src/app/worker.ts')] });
const workerSource = worker.outputFiles[0].text;
const app = await build({
  ...common,
  entryPoints: [join(root, 'src/app/main.tsx')],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  define: { __PROFKIT_WORKER_SOURCE__: JSON.stringify(workerSource) },
});
const graph = await build({ ...common, entryPoints: [join(root, 'src/app/graph-layout.ts')] });

mkdirSync(out, { recursive: true });
// Written beside and renamed: a server reading dist/www never sees half a file.
const put = (name, data) => {
  writeFileSync(join(out, `${name}.tmp`), data);
  renameSync(join(out, `${name}.tmp`), join(out, name));
};
put('app.js', app.outputFiles[0].contents);
put('graph.js', graph.outputFiles[0].contents);
put('index.html', readFileSync(join(root, 'src/app/index.html')));
copyFileSync(join(root, 'src/app/app.css'), join(out, 'app.css'));
console.log(`@profkit/web: dist/www/app.js ${(app.outputFiles[0].contents.length / 1000).toFixed(1)} KB (worker ${(workerSource.length / 1000).toFixed(1)} KB), graph.js ${(graph.outputFiles[0].contents.length / 1000).toFixed(1)} KB`);
