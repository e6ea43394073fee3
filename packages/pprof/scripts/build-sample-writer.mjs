#!/usr/bin/env node
/**
 * Regenerates src/sample-writer-wasm.ts from src/sample-writer.wat (run `node scripts/build-sample-writer.mjs`
 * after editing the .wat; the shared part is tools/scripts/wat-module.mjs). test/sample-writer.test.ts
 * rebuilds it and fails when the committed file differs, so the two cannot drift apart.
 */
import { fileURLToPath } from 'node:url';
import { assembleWat, generatedWasmSource, writeWatModule } from '../../../tools/scripts/wat-module.mjs';

export const WAT_PATH = fileURLToPath(new URL('../src/sample-writer.wat', import.meta.url));
export const GENERATED_PATH = fileURLToPath(new URL('../src/sample-writer-wasm.ts', import.meta.url));

/** The module's bytes, assembled from the .wat text. */
export const assemble = (watText) => assembleWat('sample-writer.wat', watText, { bulk_memory: false });

/** The TypeScript file that carries the bytes. */
export const generatedSource = (bytes) =>
  generatedWasmSource(bytes, { script: 'packages/pprof/scripts/build-sample-writer.mjs', wat: 'sample-writer.wat', test: 'test/sample-writer.test.ts', title: 'The sample writer module', constName: 'SAMPLE_WRITER_WASM_BASE64' });

if (process.argv[1] === fileURLToPath(import.meta.url)) await writeWatModule(WAT_PATH, GENERATED_PATH, assemble, generatedSource);
