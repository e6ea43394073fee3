/**
 * The registry's file access on Node (`FileAccess`, see `../registry.ts`): how a registry made by
 * `@profkit/core/node`'s `createRegistry` reads paths (`-` = stdin) and writes files atomically.
 */

import { statSync } from 'node:fs';
import type { FileAccess } from '../registry.js';
import { openStreamInput, readChunks, readHead, readInput, writeFileAtomic } from './io.js';

export const nodeFileAccess: FileAccess = Object.freeze({
  isRegularFile(path: string): boolean {
    if (path === '-') return false;
    try {
      return statSync(path).isFile();
    } catch {
      return true; // let the read report the real error (no such file, permission...)
    }
  },
  size(path: string): number | undefined {
    try {
      const st = statSync(path);
      return st.isFile() ? st.size : undefined;
    } catch {
      return undefined;
    }
  },
  head: readHead,
  readAll: readInput,
  chunks: (path: string, options: { chunkSize: number; gzipped?: boolean }) => readChunks(path, { gunzip: true, chunkSize: options.chunkSize, gzip: options.gzipped }),
  openStream: openStreamInput,
  writeAtomic: writeFileAtomic,
});
