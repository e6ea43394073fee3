#!/usr/bin/env node
/**
 * Size of the in-memory profile model against the uncompressed pprof encoding of the same
 * profile: `npm run bench -- model FILE...` (default: the bench's generated 200k-sample profile).
 * Typed-array bytes are exact; strings are estimated as 16 bytes of header plus one byte per
 * character (V8's one-byte strings), which is what most profile strings are.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { createRegistry, isGzip } from '@profkit/core/node';
import pprof from '@profkit/pprof';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const defaults = [join(repoRoot, 'node_modules/.cache/profkit-bench/goref-gen-200000-42.pb.gz')];
const files = process.argv.slice(2).length ? process.argv.slice(2) : defaults.filter((f) => existsSync(f));
if (files.length === 0) {
  process.stderr.write('no input: run `npm run bench -- pprof` first (it generates the profiles) or name pprof files\n');
  process.exit(2);
}

function modelBytes(profile) {
  let typed = 0;
  let strings = 0;
  const walk = (value) => {
    if (ArrayBuffer.isView(value)) typed += value.byteLength;
    else if (typeof value === 'string') strings += 16 + value.length;
    else if (Array.isArray(value)) for (const x of value) walk(x);
    else if (value && typeof value === 'object') for (const v of Object.values(value)) walk(v);
  };
  walk(profile);
  return { typed, strings };
}

const registry = createRegistry([pprof]);
for (const file of files) {
  const bytes = readFileSync(file);
  const raw = isGzip(bytes) ? gunzipSync(bytes) : bytes;
  const { profile } = await registry.read(file);
  const { typed, strings } = modelBytes(profile);
  const frames = profile.samples.locations.location_id.length;
  console.log(
    JSON.stringify({
      file,
      samples: profile.samples.value.length,
      frames,
      rawProtoBytes: raw.length,
      typedArrayBytes: typed,
      stringBytesEstimate: strings,
      modelToRawRatio: +((typed + strings) / raw.length).toFixed(2),
    }),
  );
}
