/**
 * One pprof benchmark contender in its own process (so its peak RSS is its own):
 *   node pprof-worker.js CONTENDER FILE REPS
 * Prints one JSON line: median times (ms) of each phase and the process's peak RSS (bytes).
 * The input file (gzip) is read into memory before timing; every contender starts from the same
 * gzip bytes.
 */

import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';

type Phase = Record<string, number>;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  const [contender, file, repsArg, warmupArg] = process.argv.slice(2);
  if (repsArg === 'rss') return rssOnce(contender!, file!);
  // Warm-up repetitions (JIT) before the timed ones, left out of the medians; the first one is
  // reported on its own as the cold time (what one CLI run pays).
  const warmup = Math.max(1, Number(warmupArg ?? 1));
  const reps = Number(repsArg ?? 5) + warmup;
  const gz = new Uint8Array(readFileSync(file!));
  const rssBefore = process.resourceUsage().maxRSS * 1024;
  const times: Record<string, number[]> = {};
  const cpuMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const time = <T>(name: string, f: () => T): T => {
    const c0 = cpuMs();
    const t0 = performance.now();
    const r = f();
    (times[name] ??= []).push(performance.now() - t0);
    (times[`cpu_${name}`] ??= []).push(cpuMs() - c0);
    return r;
  };
  const timeAsync = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
    const c0 = cpuMs();
    const t0 = performance.now();
    const r = await f();
    (times[name] ??= []).push(performance.now() - t0);
    (times[`cpu_${name}`] ??= []).push(cpuMs() - c0);
    return r;
  };
  // Wall and CPU time of a whole round trip.
  let rt0 = 0;
  let rc0 = 0;
  const start = () => {
    rt0 = performance.now();
    rc0 = cpuMs();
  };
  const lap = (name: string) => {
    (times[name] ??= []).push(performance.now() - rt0);
    (times[`cpu_${name}`] ??= []).push(cpuMs() - rc0);
  };
  let checksum = 0;
  switch (contender) {
    case 'baseline':
      break;
    case 'profkit': {
      const { decodeProfile, encodeProfile, gzipLikeGo, gunzipExact } = await import('@profkit/pprof');
      for (let i = 0; i < reps; i++) {
        start();
        // What parsePprof and the adapter do: inflate into one buffer sized from the gzip trailer.
        const raw = time('gunzip', () => gunzipExact(gz));
        const p = time('decode', () => decodeProfile(raw).profile);
        const out = time('encode', () => encodeProfile(p));
        lap('roundtrip');
        const z = time('gzip6', () => gzipLikeGo(out, 6));
        lap('roundtrip_gz6');
        const z1 = time('gzip1', () => gzipLikeGo(out, 1));
        (times.roundtrip_gz1 ??= []).push(times.roundtrip!.at(-1)! + times.gzip1!.at(-1)!);
        (times.cpu_roundtrip_gz1 ??= []).push(times.cpu_roundtrip!.at(-1)! + times.cpu_gzip1!.at(-1)!);
        checksum += out.length + z.length + z1.length;
      }
      break;
    }
    case 'profkit-registry':
    case 'profkit-registry-whole': {
      // The CLI's path (`profkit convert in.pb.gz out.pb.gz`): registry.read(path) → validation →
      // registry.write(profile, path) → validation, encode, gzip -6 streamed to an atomic file
      // write. The read is streamed (the file is inflated twice) unless `-whole`
      // (`--read-option stream=false`: inflated once into one buffer).
      const readOptions = contender === 'profkit-registry-whole' ? { options: { stream: false } } : {};
      const { createRegistry } = await import('@profkit/core/node');
      const { pprofAdapter } = await import('@profkit/pprof');
      const registry = createRegistry([pprofAdapter]);
      const target = join(tmpdir(), `profkit-bench-${process.pid}.pb.gz`);
      try {
        for (let i = 0; i < reps; i++) {
          start();
          const r = await timeAsync('read', () => registry.read(file!, readOptions));
          await timeAsync('write', () => registry.write(r.profile, target));
          lap('roundtrip_gz6');
          checksum += r.profile.samples.locations.location_id.length;
        }
      } finally {
        rmSync(target, { force: true });
      }
      break;
    }
    case 'pprof-format': {
      const { Profile } = await import('pprof-format');
      for (let i = 0; i < reps; i++) {
        start();
        const raw = time('gunzip', () => gunzipSync(gz));
        const p = time('decode', () => Profile.decode(raw));
        const out = time('encode', () => p.encode());
        lap('roundtrip');
        checksum += out.length;
      }
      break;
    }
    case 'protobufjs': {
      // CommonJS module: its API is the default export under ESM.
      const mod = (await import('protobufjs')) as unknown as { default?: typeof import('protobufjs') } & typeof import('protobufjs');
      const protobuf = mod.default ?? mod;
      const here = dirname(fileURLToPath(import.meta.url));
      const proto = readFileSync(join(here, '../../../packages/pprof/src/profile.proto'), 'utf8');
      const T = protobuf.parse(proto, { keepCase: true }).root.lookupType('perftools.profiles.Profile');
      for (let i = 0; i < reps; i++) {
        start();
        const raw = time('gunzip', () => gunzipSync(gz));
        const m = time('decode', () => T.decode(raw));
        const out = time('encode', () => T.encode(m).finish());
        lap('roundtrip');
        checksum += out.length;
      }
      break;
    }
    case 'zlib': {
      for (let i = 0; i < reps; i++) checksum += time('gunzip', () => gunzipSync(gz)).length;
      // The same inflate into one chunk sized from the gzip trailer (no Buffer.concat copy).
      const size = new DataView(gz.buffer, gz.byteOffset, gz.byteLength).getUint32(gz.length - 4, true);
      for (let i = 0; i < reps; i++) checksum += time('gunzip_exact', () => gunzipSync(gz, { chunkSize: size + 1 })).length;
      const raw = gunzipSync(gz);
      for (let i = 0; i < reps; i++) checksum += time('gzip6', () => gzipSync(raw, { level: 6 })).length;
      for (let i = 0; i < reps; i++) checksum += time('gzip1', () => gzipSync(raw, { level: 1 })).length;
      break;
    }
    case 'pako': {
      const mod = (await import('pako')) as unknown as { default?: typeof import('pako') } & typeof import('pako');
      const pako = mod.default ?? mod;
      for (let i = 0; i < reps; i++) checksum += time('gunzip', () => pako.ungzip(gz)).length;
      break;
    }
    default:
      throw new Error(`unknown contender ${contender}`);
  }
  const phases: Phase = {};
  for (const [k, v] of Object.entries(times)) if (v.length > warmup) phases[`cold_${k}`] = Math.round(v[0]! * 10) / 10;
  for (const v of Object.values(times)) if (v.length > warmup) v.splice(0, warmup);
  for (const [k, v] of Object.entries(times)) phases[k] = Math.round(median(v) * 10) / 10;
  process.stdout.write(`${JSON.stringify({ contender, phases, maxRSS: process.resourceUsage().maxRSS * 1024, rssAtStart: rssBefore, checksum })}\n`);
}

/**
 * Peak RSS of one gunzip + decode + encode (raw), nothing else in the process: what converting
 * one file costs in memory. Times are not taken here.
 */
async function rssOnce(contender: string, file: string): Promise<void> {
  const gz = new Uint8Array(readFileSync(file));
  let n = 0;
  if (contender === 'profkit') {
    const { parsePprof, encodeProfile } = await import('@profkit/pprof');
    n = encodeProfile(parsePprof(gz).profile).length;
  } else if (contender === 'profkit-registry' || contender === 'profkit-registry-whole') {
    // The CLI's convert: the file is read by the registry (not the `gz` above, kept only so that
    // the idle baseline is comparable), validated, re-encoded, gzipped and written.
    const { createRegistry } = await import('@profkit/core/node');
    const { pprofAdapter } = await import('@profkit/pprof');
    const registry = createRegistry([pprofAdapter]);
    const target = join(tmpdir(), `profkit-bench-${process.pid}.pb.gz`);
    try {
      const r = await registry.read(file, contender === 'profkit-registry-whole' ? { options: { stream: false } } : {});
      await registry.write(r.profile, target);
      n = r.profile.samples.locations.location_id.length;
    } finally {
      rmSync(target, { force: true });
    }
  } else if (contender === 'pprof-format') {
    const { Profile } = await import('pprof-format');
    n = Profile.decode(gunzipSync(gz)).encode().length;
  } else if (contender === 'protobufjs') {
    const mod = (await import('protobufjs')) as unknown as { default?: typeof import('protobufjs') } & typeof import('protobufjs');
    const protobuf = mod.default ?? mod;
    const here = dirname(fileURLToPath(import.meta.url));
    const T = protobuf.parse(readFileSync(join(here, '../../../packages/pprof/src/profile.proto'), 'utf8'), { keepCase: true }).root.lookupType('perftools.profiles.Profile');
    n = T.encode(T.decode(gunzipSync(gz))).finish().length;
  } else if (contender === 'zlib') n = gunzipSync(gz).length;
  else if (contender !== 'baseline') throw new Error(`unknown contender ${contender}`);
  process.stdout.write(`${JSON.stringify({ contender, phases: {}, maxRSS: process.resourceUsage().maxRSS * 1024, checksum: n })}\n`);
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
