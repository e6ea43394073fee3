/**
 * @profkit/rprof: R's `Rprof()` output (`.out`, read + write, streaming, gzip) and folded stacks
 * (`a;b;c 12`, read + write). The adapter object is the default export and `rprofAdapter`.
 */

import { defineAdapter, ErrorCodes, ProfkitError, type AdapterCodec } from '@profkit/core';
import { sniffRprof } from './sniff.js';
import { readRprofInput } from './read.js';
import { writeRprof } from './write.js';
import { readFoldedChunks, writeFolded } from './folded.js';
import { rAccountingTransform } from './accounting.js';
import { PACKAGE_VERSION } from './version.js';

export { sniffRprof, sniffFolded } from './sniff.js';
export { RprofParser, readRprofBytes, readRprofChunks, readRprofInput, memoryDelta, ADAPTER_NAME, type RprofReadOptions, type RprofReadResult, type RprofRun } from './read.js';
export { writeRprof, writeRprofText, type RprofWriteOptions } from './write.js';
export { writeFolded, readFoldedChunks, type FoldedWriteOptions } from './folded.js';
export { summarizeRprof, SummaryTable, type RprofSummary, type SummaryEntry, type SummarizeOptions } from './summary.js';
export { rAccounting, rAccountingTransform, GC_FRAME, NO_LOCATION, type RLinesView } from './accounting.js';
export { LineSplitter } from './lines.js';
export { parseHeader, parseTraceLine, newTraceLine, type TraceLine, type Header } from './grammar.js';

function bool(v: unknown): boolean | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === '1' || v === 1) return true;
  if (v === 'false' || v === '0' || v === 0) return false;
  throw new ProfkitError(ErrorCodes.USAGE, `expected a boolean option, got ${JSON.stringify(v)}`);
}

// The reader and writers are imported statically, as @profkit/pprof's codec is: this module
// re-exports them anyway, and a dynamic import() makes a bundler (esbuild) wrap every module it
// reaches in a lazy initializer, keeping core's unused top-level code in a browser bundle
// (tools/browser-check).
async function loadCodec(): Promise<AdapterCodec> {
  return {
    async read(input, options) {
      const o = options.options ?? {};
      if (options.format === 'folded') {
        const r = await readFoldedChunks(input.chunks(), { fileName: input.fileName, limits: options.limits });
        return { ...r, format: 'folded' };
      }
      const r = await readRprofInput(input, {
        aggregate: bool(o.aggregate),
        resolveFiles: bool(o.resolveFiles),
        maxLineLength: options.limits?.maxLineLength,
        limits: options.limits,
      });
      return { ...r, format: 'rprof' };
    },
    async write(profile, options) {
      const o = options.options ?? {};
      if (options.format === 'folded') {
        const { text, warnings } = writeFolded(profile, {
          sampleType: o.sampleType === undefined ? undefined : String(o.sampleType),
          gcFrame: bool(o.gcFrame),
        });
        return { data: new TextEncoder().encode(text), warnings };
      }
      return writeRprof(profile, {
        countType: o.countType === undefined ? undefined : String(o.countType),
        intervalUs: o.intervalUs === undefined ? undefined : Number(o.intervalUs),
        maxLines: o.maxLines === undefined ? undefined : Number(o.maxLines),
      });
    },
  };
}

export const rprofAdapter = defineAdapter({
  name: 'rprof',
  packageName: '@profkit/rprof',
  version: PACKAGE_VERSION,
  description: "R's Rprof() output (line/memory/GC profiling, appended runs, gzip; streaming) and folded stacks for flame graphs",
  formats: [
    { id: 'rprof', title: 'R Rprof output', extensions: ['.out', '.rprof', '.Rprof'], binary: false, read: true, write: true },
    { id: 'folded', title: 'Folded (collapsed) stacks', extensions: ['.folded', '.collapsed'], binary: false, read: true, write: true },
  ],
  sniff: sniffRprof,
  load: loadCodec,
  transforms: [rAccountingTransform],
});

export default rprofAdapter;
