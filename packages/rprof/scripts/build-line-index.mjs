#!/usr/bin/env node
/**
 * Regenerates src/line-index-wasm.ts from src/line-index.wat (run `node scripts/build-line-index.mjs`
 * after editing the .wat; the shared part is tools/scripts/wat-module.mjs). test/line-index.test.ts
 * rebuilds it and fails when the committed file differs, so the two cannot drift apart.
 */
import { fileURLToPath } from 'node:url';
import { assembleWat, generatedWasmSource, writeWatModule } from '../../../tools/scripts/wat-module.mjs';

export const WAT_PATH = fileURLToPath(new URL('../src/line-index.wat', import.meta.url));
export const GENERATED_PATH = fileURLToPath(new URL('../src/line-index-wasm.ts', import.meta.url));

/** The module's bytes, assembled from the .wat text. */
export const assemble = (watText) => assembleWat('line-index.wat', watText, { bulk_memory: true });

/** The TypeScript file that carries the bytes. */
export const generatedSource = (bytes) =>
  generatedWasmSource(bytes, { script: 'packages/rprof/scripts/build-line-index.mjs', wat: 'line-index.wat', test: 'test/line-index.test.ts', title: 'The line index module', constName: 'LINE_INDEX_WASM_BASE64' });

if (process.argv[1] === fileURLToPath(import.meta.url)) await writeWatModule(WAT_PATH, GENERATED_PATH, assemble, generatedSource);
