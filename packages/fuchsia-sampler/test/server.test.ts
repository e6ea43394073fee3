import { execFileSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { gorefBinary, gorefMissing as gorefMissingReason } from '@profkit/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { assertValid, createRegistry, locationRows, mappingRows, sampleRows, type CommandContext, type Profile } from '@profkit/core/node';
import pprofAdapter from '@profkit/pprof';
import fuchsiaSampler, {
  callsToRecording,
  connectSampler,
  recordingHeader,
  replayRecording,
  replayTo,
  startCollector,
  type CollectorOptions,
  type SamplerCall,
} from '../src/node.js';

const registry = createRegistry([pprofAdapter, fuchsiaSampler]);
const tmp = mkdtempSync(join(tmpdir(), 'fuchsia-sampler-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let dirN = 0;
const freshDir = () => join(tmp, `out${++dirN}`);

const writeProfile = async (p: Profile, path: string) => registry.write(p, path);
const base = (o: Partial<CollectorOptions>): CollectorOptions => ({
  listen: '127.0.0.1:0',
  outDir: freshDir(),
  writeProfile,
  timeoutMs: 20_000,
  ...o,
});

const st = (...f: number[]) => ({ stackFrames: BigUint64Array.from(f.map(BigInt)) });
function workload(name: string, n: number, seed: number): SamplerCall[] {
  const calls: SamplerCall[] = [
    { method: 'SetProcessInfo', processName: name, moduleMap: [{ buildId: Uint8Array.of(seed, 2, 3), executableSegments: [{ startAddress: 0x1000n, size: 0x10000n, relativeAddress: 0x400n }] }] },
  ];
  for (let i = 0; i < n; i++) {
    calls.push({ method: 'RecordAllocation', address: BigInt(0x10000 + i * 16), stackTrace: st(0x1000 + (i % 7) * 4, 0x2000 + seed), size: BigInt(16 + ((i * seed) % 500)) });
    if (i % 3 === 1) calls.push({ method: 'RecordDeallocation', address: BigInt(0x10000 + (i - 1) * 16), stackTrace: st(0x3000 + (i % 5)) });
  }
  return calls;
}

/** Meaning of a profile: sorted (stack addresses, values) rows, and mappings. */
function meaning(p: Profile) {
  const addr = new Map<number, bigint>();
  for (const l of locationRows(p)) addr.set(l.locationId, l.address);
  const rows = [...sampleRows(p)].map((s) => `${s.locationIds.map((id) => addr.get(id)!.toString(16)).join(',')}=${s.values.join(',')}`).sort();
  const maps = [...mappingRows(p)].map((m) => `${m.memoryStart}-${m.memoryLimit}@${m.fileOffset}:${m.buildId}`);
  return { rows, maps };
}

async function readOut(path: string): Promise<Profile> {
  const r = await registry.read(path);
  expect(r.format).toBe('pprof');
  return r.profile;
}

describe('live collector over loopback TCP', () => {
  it('serves several clients at once; a bad client does not take down the others', async () => {
    const col = await startCollector(base({ maxConnections: 4 }));
    const workloads = [workload('alpha', 300, 1), workload('beta', 200, 2), workload('gamma_proc', 100, 3)];
    const send = async (calls: SamplerCall[], via: 'channel' | 'socket', generation: 1 | 2) => {
      const c = await connectSampler(col.address, { generation, batchBytes: 4096 });
      for (const call of calls) await c.send(call, call.method === 'SetProcessInfo' ? 'channel' : via);
      await c.close();
    };
    const bad = (async () => {
      const c = await connectSampler(col.address);
      await c.sendRaw(Uint8Array.of(9, 0, 0, 0, 8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8)); // unknown record kind
      await c.close().catch(() => {});
    })();
    await Promise.all([send(workloads[0]!, 'channel', 1), send(workloads[1]!, 'socket', 2), send(workloads[2]!, 'channel', 2), bad]);
    const s = await col.done;
    expect(s.connections).toBe(4);
    expect(s.errors.some((e) => /PROFKIT_E_FUCHSIA_RECORDING/.test(e))).toBe(true);
    const files = readdirSync(join(s.files[0]!, '..')).sort();
    expect(files).toEqual(['alpha_final_0.pb.gz', 'beta_final_0.pb.gz', 'gamma_proc_final_0.pb.gz', 'unknown_final_0.pb.gz']);
    // Each final profile equals the offline replay of the same calls.
    for (const [i, name] of ['alpha', 'beta', 'gamma_proc'].entries()) {
      const got = await readOut(join(s.files[0]!, '..', `${name}_final_0.pb.gz`));
      assertValid(got);
      const want = replayRecording(callsToRecording(workloads[i]!)).profiles.at(-1)!.profile;
      expect(meaning(got)).toEqual(meaning(want));
      expect(got.samples.value.length).toBeGreaterThan(0);
    }
    const gz = readFileSync(join(s.files[0]!, '..', 'alpha_final_0.pb.gz'));
    expect([gz[0], gz[1]]).toEqual([0x1f, 0x8b]);
  });

  it('writes partial profiles with upstream naming and semantics, then the final one', async () => {
    const col = await startCollector(base({ maxConnections: 1, partialThreshold: 4, unsample: false }));
    const calls = workload('parts', 60, 5);
    const c = await connectSampler(col.address);
    for (const call of calls) await c.send(call);
    await c.close();
    const s = await col.done;
    const offline = replayRecording(callsToRecording(calls), { partialThreshold: 4, unsample: false }).profiles;
    const names = readdirSync(join(s.files[0]!, '..')).sort();
    const expected = offline.map((p) => (p.kind === 'final' ? 'parts_final_0.pb.gz' : `parts_partial_${p.iteration}.pb.gz`)).sort();
    expect(names).toEqual(expected);
    expect(offline.length).toBeGreaterThan(3);
    for (const p of offline) {
      const file = p.kind === 'final' ? 'parts_final_0.pb.gz' : `parts_partial_${p.iteration}.pb.gz`;
      expect(meaning(await readOut(join(s.files[0]!, '..', file)))).toEqual(meaning(p.profile));
    }
  });

  it('the time trigger: a partial profile once the interval has passed since the last one', async () => {
    // A clock that advances 400 ms per reading: the session reads it once at start and once after
    // each event, so the 1000 ms interval has passed after the third event, whatever the timing.
    let readings = 0;
    const col = await startCollector(base({ maxConnections: 1, partialThreshold: 0, partialIntervalMs: 1000, now: () => 400 * readings++ }));
    const c = await connectSampler(col.address);
    await c.send({ method: 'SetProcessInfo', processName: 'timed' });
    await c.send({ method: 'RecordAllocation', address: 1n, stackTrace: st(0x10), size: 5n });
    await c.send({ method: 'RecordAllocation', address: 2n, stackTrace: st(0x20), size: 6n });
    await c.close();
    const s = await col.done;
    expect(readdirSync(join(s.files[0]!, '..')).sort()).toEqual(['timed_final_0.pb.gz', 'timed_partial_3.pb.gz']);
  });

  it('bounded memory per client: an oversize record or too many live allocations are contained', async () => {
    const col = await startCollector(base({ maxConnections: 2, maxRecordBytes: 1024, maxLiveAllocations: 50 }));
    const big = await connectSampler(col.address);
    const header = Uint8Array.of(1, 0, 0, 0, 0, 0, 0x10, 0); // a 1 MiB record announced
    await big.sendRaw(header);
    const many = await connectSampler(col.address);
    await many.send({ method: 'SetProcessInfo', processName: 'many' });
    for (let i = 0; i < 200; i++) await many.send({ method: 'RecordAllocation', address: BigInt(i + 1), stackTrace: st(i), size: 8n });
    await many.close();
    await big.close().catch(() => {});
    const s = await col.done;
    expect(s.errors.some((e) => /exceeds the limit of 1024/.test(e))).toBe(true);
    const p = await readOut(join(s.files[0]!, '..', 'many_final_0.pb.gz'));
    expect(p.samples.value.length).toBe(50);
  });

  it('stops on abort (SIGTERM) and writes the final profile of a client still connected', async () => {
    const ac = new AbortController();
    const col = await startCollector(base({ signal: ac.signal }));
    const c = await connectSampler(col.address);
    await c.send({ method: 'SetProcessInfo', processName: 'still_here' });
    await c.send({ method: 'RecordAllocation', address: 1n, stackTrace: st(0x1234), size: 77n });
    await c.flush();
    // Wait until the collector has seen both events.
    while (col.stats().events < 2) await new Promise((r) => setTimeout(r, 10));
    expect(col.stats().clients).toBe(1);
    ac.abort();
    const s = await col.done;
    expect(s.reason).toBe('signal');
    const p = await readOut(join(s.files[0]!, '..', 'still_here_final_0.pb.gz'));
    expect(meaning(p).rows.length).toBe(1);
    expect(meaning(p).rows[0]!.startsWith('1234=')).toBe(true);
    expect(p.samples['.values'][1]![0]).toBe(BigInt(Math.round(77 / -Math.expm1(-77 / 131072))));
    c.destroy();
  });

  it('a client trickling one byte at a time is served correctly', async () => {
    const col = await startCollector(base({ maxConnections: 1 }));
    const calls = workload('trickle', 5, 2);
    const bytes = callsToRecording(calls).subarray(16); // the client sends the stream header itself
    const c = await connectSampler(col.address);
    for (const b of bytes) await c.sendRaw(Uint8Array.of(b));
    await c.close();
    const s = await col.done;
    const got = await readOut(join(s.files[0]!, '..', 'trickle_final_0.pb.gz'));
    expect(meaning(got)).toEqual(meaning(replayRecording(callsToRecording(calls)).profiles[0]!.profile));
  });

  it('a client disconnecting inside a record still gets its final profile', async () => {
    const col = await startCollector(base({ maxConnections: 1 }));
    const c = await connectSampler(col.address);
    await c.send({ method: 'SetProcessInfo', processName: 'cut' });
    await c.send({ method: 'RecordAllocation', address: 1n, stackTrace: st(0x10), size: 5n });
    await c.sendRaw(Uint8Array.of(1, 0, 0, 0, 64, 0, 0, 0, 1, 2));
    // The collector says so in its reply: the stream was not taken whole.
    await expect(c.close()).rejects.toMatchObject({ code: 'PROFKIT_E_NETWORK', message: expect.stringMatching(/ended the connection: disconnected inside a record \(10 bytes dropped\)/) });
    const s = await col.done;
    expect(s.errors.some((e) => /inside a record/.test(e))).toBe(true);
    const p = await readOut(join(s.files[0]!, '..', 'cut_final_0.pb.gz'));
    expect(p.samples.value.length).toBe(1);
  });

  it('a missing required field ends that client (as upstream) and its final profile is written', async () => {
    const col = await startCollector(base({ maxConnections: 2 }));
    const bad = await connectSampler(col.address);
    await bad.send({ method: 'SetProcessInfo', processName: 'nofield' });
    await bad.send({ method: 'RecordAllocation', address: 1n, stackTrace: st(0x10), size: 5n });
    await bad.send({ method: 'RecordAllocation', address: 2n, stackTrace: st(0x10) }); // no size
    await bad.send({ method: 'RecordAllocation', address: 3n, stackTrace: st(0x10), size: 5n });
    await bad.flush();
    const good = await connectSampler(col.address);
    for (const call of workload('fine', 10, 1)) await good.send(call);
    await good.close();
    await bad.close().catch(() => {});
    const s = await col.done;
    expect(s.errors.some((e) => /PROFKIT_E_FUCHSIA_MISSING_FIELD/.test(e) && /size/.test(e))).toBe(true);
    const p = await readOut(join(s.files[0]!, '..', 'nofield_final_0.pb.gz'));
    expect(p.samples.value.length).toBe(1); // the record after the bad one was not applied
    expect(readdirSync(join(s.files[0]!, '..')).sort()).toEqual(['fine_final_0.pb.gz', 'nofield_final_0.pb.gz']);
  });

  it('refuses clients beyond maxClients and stops after its timeout', async () => {
    const col = await startCollector(base({ maxClients: 1, timeoutMs: 1000 }));
    const a = await connectSampler(col.address);
    const b = await connectSampler(col.address);
    const s = await col.done;
    expect(s.refused).toBe(1);
    expect(s.reason).toMatch(/timeout/);
    a.destroy();
    b.destroy();
  });

  it('takes a timeout beyond what a timer holds (2^31 ms, ~24.8 days, e.g. --timeout 3000000) as a long one, not an instant stop', async () => {
    const col = await startCollector(base({ timeoutMs: 3_000_000_000 }));
    await new Promise((ok) => setTimeout(ok, 100));
    expect(col.stats().clients).toBe(0);
    await col.close('test over');
    expect((await col.done).reason).toBe('test over');
  });
});

describe('unix socket', () => {
  it('listens on a unix socket in a temp dir and removes it when done', async () => {
    const path = join(tmp, 'sampler.sock');
    const col = await startCollector(base({ listen: `unix:${path}`, maxConnections: 1 }));
    const c = await connectSampler(`unix:${path}`);
    for (const call of workload('unixproc', 20, 4)) await c.send(call);
    await c.close();
    const s = await col.done;
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(join(s.files[0]!, '..'))).toEqual(['unixproc_final_0.pb.gz']);
  });
});

/** A CommandContext for calling adapter commands directly. */
function makeCtx(positionals: string[], values: CommandContext['values'], signal = new AbortController().signal) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => (out += d));
  stderr.on('data', (d) => (err += d));
  const ctx: CommandContext = {
    positionals,
    values,
    readProfile: (path, o) => registry.read(path, o),
    readProfileBytes: (bytes, o) => registry.read(bytes, o),
    writeProfile: async (p, path, o) => (await registry.write(p, path, o)).warnings,
    stdout,
    stderr,
    json: false,
    quiet: false,
    verbose: false,
    progress: () => ({ update() {}, done() {} }),
    signal,
  };
  return { ctx, out: () => out, err: () => err };
}

describe('adapter commands (called with a built context)', () => {
  const cmd = (name: string) => fuchsiaSampler.commands!.find((c) => c.name === name)!;
  it('serve + replay: a recording replayed to the collector yields the offline profile', async () => {
    const outDir = freshDir();
    const serve = makeCtx([], { listen: '127.0.0.1:0', out: outDir, 'max-connections': '2', timeout: '20', raw: true });
    const serving = cmd('fuchsia-sampler serve').run(serve.ctx);
    while (!/listening /.test(serve.out())) await new Promise((r) => setTimeout(r, 10));
    const addr = /listening (\S+)/.exec(serve.out())![1]!;
    const rec = join(tmp, 'w.fsrec');
    const calls = workload('replayed', 50, 6);
    writeFileSync(rec, callsToRecording(calls, { generation: 1 }));
    const jsonl = join(tmp, 'upstream.fsrec.jsonl');
    writeFileSync(jsonl, readFileSync(new URL('./fixtures/upstream-example.fsrec.jsonl', import.meta.url)));
    for (const file of [rec, jsonl]) {
      const rep = makeCtx([file], { to: addr });
      expect(await cmd('fuchsia-sampler replay').run(rep.ctx)).toBe(0);
      expect(rep.out()).toMatch(/sent \d+ records/);
    }
    expect(await serving).toBe(0);
    expect(serve.out()).toMatch(/2 connections/);
    expect(readdirSync(outDir).sort()).toEqual(['replayed_final_0.pb.gz', 'test_process_final_0.pb.gz']);
    const got = await readOut(join(outDir, 'replayed_final_0.pb.gz'));
    expect(meaning(got)).toEqual(meaning(replayRecording(callsToRecording(calls), { unsample: false }).profiles[0]!.profile));
    const up = await readOut(join(outDir, 'test_process_final_0.pb.gz'));
    expect(meaning(up).rows).toEqual(['3e8,5dc=0,0,1,100,0,0', '3e8,5dc=1,1000,1,1000,0,0', 'bb8,bb9=0,0,0,0,1,100']);
  });
  it('errors are thrown as ProfkitErrors with the code the CLI maps to its exit code', async () => {
    const a = makeCtx([], { out: freshDir() });
    await expect(cmd('fuchsia-sampler serve').run(a.ctx)).rejects.toMatchObject({ code: 'PROFKIT_E_USAGE', message: expect.stringMatching(/--listen/) });
    const b = makeCtx([], { listen: 'nonsense', out: freshDir() });
    await expect(cmd('fuchsia-sampler serve').run(b.ctx)).rejects.toMatchObject({ code: 'PROFKIT_E_USAGE', message: expect.stringMatching(/"nonsense" is not HOST:PORT/) });
    const n = makeCtx([], { listen: '127.0.0.1:0', out: freshDir(), 'max-clients': 'lots' });
    await expect(cmd('fuchsia-sampler serve').run(n.ctx)).rejects.toMatchObject({ code: 'PROFKIT_E_USAGE', detail: { rule: 'usage of profkit fuchsia-sampler serve' } });
    const rec = join(tmp, 'ok.fsrec');
    writeFileSync(rec, callsToRecording(workload('x', 3, 1)));
    // Port 1 on loopback: nothing listens there.
    const c = makeCtx([rec], { to: '127.0.0.1:1' });
    await expect(cmd('fuchsia-sampler replay').run(c.ctx)).rejects.toMatchObject({ code: 'PROFKIT_E_NETWORK' });
    const badRec = join(tmp, 'bad.fsrec');
    writeFileSync(badRec, Uint8Array.from([...recordingHeader(), 7, 0, 0, 0, 0, 0, 0, 0]));
    const d = makeCtx([badRec], { to: '127.0.0.1:1' });
    await expect(cmd('fuchsia-sampler replay').run(d.ctx)).rejects.toMatchObject({ code: 'PROFKIT_E_FUCHSIA_RECORDING' });
    const missing = makeCtx([join(tmp, 'no-such.fsrec')], { out: freshDir() });
    await expect(cmd('fuchsia-sampler profiles').run(missing.ctx)).rejects.toMatchObject({ code: 'PROFKIT_E_IO' });
    // An output directory that cannot be made is an I/O error, not a network one.
    const aFile = join(tmp, 'a-file');
    writeFileSync(aFile, 'x');
    const noDir = makeCtx([], { listen: '127.0.0.1:0', out: join(aFile, 'sub') });
    await expect(cmd('fuchsia-sampler serve').run(noDir.ctx)).rejects.toMatchObject({ code: 'PROFKIT_E_IO', detail: { file: join(aFile, 'sub') } });
    // Nothing was printed by the commands themselves: the CLI prints the one error line.
    for (const x of [a, b, c, d, missing, noDir]) expect(x.err()).toBe('');
  });
  it('--json: versioned documents (profkit.fuchsia-sampler.<command>/1)', async () => {
    const outDir = freshDir();
    const serve = makeCtx([], { listen: '127.0.0.1:0', out: outDir, 'max-connections': '1', timeout: '20', raw: true });
    serve.ctx.json = true;
    const serving = cmd('fuchsia-sampler serve').run(serve.ctx);
    while (!serve.out().includes('\n')) await new Promise((r) => setTimeout(r, 10));
    const first = JSON.parse(serve.out().split('\n')[0]!);
    expect(first).toMatchObject({ schema: 'profkit.fuchsia-sampler.serve/1', event: 'listening' });
    expect(first.address).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
    const rec = join(tmp, 'json.fsrec');
    writeFileSync(rec, callsToRecording(workload('jsonproc', 20, 3)));
    const rep = makeCtx([rec], { to: first.address });
    rep.ctx.json = true;
    expect(await cmd('fuchsia-sampler replay').run(rep.ctx)).toBe(0);
    const sent = JSON.parse(rep.out());
    expect(sent).toMatchObject({ schema: 'profkit.fuchsia-sampler.replay/1', recording: rec, to: first.address });
    expect(sent.records).toBeGreaterThan(0);
    expect(await serving).toBe(0);
    const lines = serve.out().trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ schema: 'profkit.fuchsia-sampler.serve/1', event: 'stopped', connections: 1, refused: 0, files: [join(outDir, 'jsonproc_final_0.pb.gz')], errors: [] });
    expect(lines[1].events).toBeGreaterThan(0);
    const prof = makeCtx([rec], { out: freshDir() });
    prof.ctx.json = true;
    expect(await cmd('fuchsia-sampler profiles').run(prof.ctx)).toBe(0);
    const doc = JSON.parse(prof.out());
    expect(doc).toMatchObject({ schema: 'profkit.fuchsia-sampler.profiles/1', recording: rec });
    // The warnings of the writer are in the document, not on stderr.
    for (const w of doc.warnings) expect(w.code).toMatch(/^PROFKIT_W_/);
    expect(prof.err()).toBe('');
    expect(doc.files.map((f: string) => f.replace(/^.*\//, ''))).toEqual(['jsonproc_final_0.pb.gz']);
  });
  it('profiles: writes every partial and the final profile of a recording', async () => {
    const rec = join(tmp, 'p.fsrec');
    writeFileSync(rec, callsToRecording(workload('offline', 60, 5)));
    const outDir = freshDir();
    const r = makeCtx([rec], { out: outDir, 'partial-threshold': '4' });
    expect(await cmd('fuchsia-sampler profiles').run(r.ctx)).toBe(0);
    const files = readdirSync(outDir);
    expect(files).toContain('offline_final_0.pb.gz');
    expect(files.filter((f) => f.startsWith('offline_partial_')).length).toBeGreaterThan(2);
  });
});

// The Go pprof oracle (goref): PROFKIT_GOREF, or built from the shared tools with go.
const gorefMissing = gorefMissingReason();
const gorefPath = () => gorefBinary('profkit-goref-fuchsia');
describe.skipIf(gorefMissing !== undefined)('interop: Go pprof reads the collector output (goref)', () => {
  if (gorefMissing) console.warn(`skipping goref interop: ${gorefMissing}`);
  it('goref check accepts the written profiles and sees the six sample types and build ids', async () => {
    const col = await startCollector(base({ maxConnections: 1, partialThreshold: 4 }));
    const c = await connectSampler(col.address);
    for (const call of workload('gocheck', 40, 9)) await c.send(call);
    await c.close();
    const s = await col.done;
    const goref = gorefPath();
    for (const f of s.files) execFileSync(goref, ['check', f], { stdio: 'pipe' });
    const finalFile = s.files.find((f) => f.endsWith('gocheck_final_0.pb.gz'))!;
    const dump = JSON.parse(execFileSync(goref, ['dump', finalFile], { encoding: 'utf8' })) as {
      sample_types: string[];
      period_type: string;
      mappings: string[];
      samples: { values: number[]; stack: { address: string }[][] }[];
    };
    expect(dump.sample_types).toEqual(['residual_allocated_objects/count', 'residual_allocated_space/bytes', 'allocated_objects/count', 'allocated_space/bytes', 'deallocated_objects/count', 'deallocated_space/bytes']);
    expect(dump.period_type).toBe('space/bytes');
    expect(dump.mappings).toEqual(['1000-11000@400  090203']);
    // Go sees the same samples (stacks by address, values) as our own replay of the same calls.
    const goRows = dump.samples.map((x) => `${x.stack.map((f) => f[0]!.address).join(',')}=${x.values.join(',')}`).sort();
    const offline = replayRecording(callsToRecording(workload('gocheck', 40, 9)), { partialThreshold: 4 }).profiles.at(-1)!.profile;
    expect(goRows).toEqual(meaning(offline).rows);
  });
});

/** A raw TCP connection to the collector that sends `bytes` (maybe none) and then stays silent. */
async function silentSocket(address: string, bytes: Uint8Array = new Uint8Array(0)): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  const socket = connect({ host, port });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = '';
  socket.on('data', (d) => (received += d));
  socket.on('error', () => {});
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  if (bytes.length) socket.write(bytes);
  return { socket, received: () => received, closed };
}

describe('issue 15: idle clients cannot hold the client limit; refusals reach the client', () => {
  it('idle connections are cut after idleTimeoutMs and a real client is then served (and refused before)', async () => {
    const col = await startCollector(base({ maxClients: 2, idleTimeoutMs: 300, handshakeTimeoutMs: 0 }));
    // Two connections that send the stream header and then nothing fill the limit.
    const idle = await Promise.all([silentSocket(col.address, recordingHeader()), silentSocket(col.address, recordingHeader())]);
    while (col.stats().clients < 2) await new Promise((r) => setTimeout(r, 10));
    const calls = workload('after_idle', 20, 3);
    // While they hold the slots, a replay is refused, and says so.
    await expect(replayTo(callsToRecording(calls), col.address)).rejects.toMatchObject({ code: 'PROFKIT_E_NETWORK', message: expect.stringMatching(/refused the connection: 2 clients connected/) });
    await Promise.all(idle.map((i) => i.closed));
    for (const i of idle) expect(i.received()).toMatch(/^error: idle for 300 ms/);
    expect(await replayTo(callsToRecording(calls), col.address)).toEqual({ records: calls.length });
    const s = await col.close();
    expect(s.refused).toBe(1);
    expect(s.errors.filter((e) => /idle for 300 ms/.test(e))).toHaveLength(2);
    expect(readdirSync(join(s.files[0]!, '..'))).toContain('after_idle_final_0.pb.gz');
  });

  it('a connection that never sends the stream header is cut after handshakeTimeoutMs, even with no idle timeout', async () => {
    const col = await startCollector(base({ maxClients: 1, idleTimeoutMs: 0, handshakeTimeoutMs: 300 }));
    const mute = await silentSocket(col.address, recordingHeader().subarray(0, 5));
    await mute.closed;
    expect(mute.received()).toMatch(/^error: no stream header within 300 ms/);
    const calls = workload('after_mute', 5, 1);
    expect(await replayTo(callsToRecording(calls), col.address)).toEqual({ records: calls.length });
    await col.close();
  });

  it('replay fails with PROFKIT_E_NETWORK when the collector refuses it (client limit), and succeeds only on "ok"', async () => {
    const col = await startCollector(base({ maxClients: 1 }));
    const holder = await connectSampler(col.address);
    await holder.send({ method: 'SetProcessInfo', processName: 'holder' });
    await holder.flush();
    while (col.stats().clients < 1) await new Promise((r) => setTimeout(r, 10));
    const rec = join(tmp, 'refused.fsrec');
    const calls = workload('refused', 30, 2);
    writeFileSync(rec, callsToRecording(calls));
    const rep = makeCtx([rec], { to: col.address });
    const cmd = fuchsiaSampler.commands!.find((c) => c.name === 'fuchsia-sampler replay')!;
    await expect(cmd.run(rep.ctx)).rejects.toMatchObject({
      code: 'PROFKIT_E_NETWORK',
      message: `${col.address} refused the connection: 1 clients connected (the limit, option maxClients, CLI --max-clients)`,
    });
    expect(rep.out()).toBe('');
    await holder.close();
    expect(holder.reply).toEqual({ status: 'ok', message: '1 events, final profile written' });
    expect(await cmd.run(rep.ctx)).toBe(0);
    expect(rep.out()).toBe(`sent ${calls.length} records to ${col.address}\n`);
    const s = await col.close();
    expect(s.refused).toBe(1);
    expect(readdirSync(join(s.files[0]!, '..')).sort()).toEqual(['holder_final_0.pb.gz', 'refused_final_0.pb.gz']);
  });

  it('a client held back while its partial profile is written (slower than the idle timeout) is not cut as idle', async () => {
    // The first partial profile takes 1.5 s to write; meanwhile the collector does not read the
    // client, whose stream (megabytes, sent at once) waits in the socket buffers: it is not idle.
    let first = true;
    const slowFirstWrite = async (p: Profile, path: string) => {
      if (first) await new Promise((r) => setTimeout(r, 1500));
      first = false;
      return writeProfile(p, path);
    };
    // A clock the test moves: one partial profile, at the first event after the jump.
    let clock = 0;
    const col = await startCollector(base({ maxConnections: 1, idleTimeoutMs: 500, partialThreshold: 0, partialIntervalMs: 1000, now: () => clock, writeProfile: slowFirstWrite }));
    const c = await connectSampler(col.address);
    await c.send({ method: 'SetProcessInfo', processName: 'held_back' });
    await c.flush();
    while (col.stats().events < 1) await new Promise((r) => setTimeout(r, 10));
    clock = 5000;
    const calls: SamplerCall[] = [];
    for (let i = 0; i < 60_000; i++) calls.push({ method: 'RecordAllocation', address: BigInt(i + 1), stackTrace: st(0x1000 + (i % 50)), size: 16n });
    await c.sendRaw(callsToRecording(calls).subarray(16)); // without its header: the client sent it
    await c.close();
    const s = await col.done;
    expect(s.errors).toEqual([]);
    expect(readdirSync(join(s.files[0]!, '..')).sort()).toEqual(['held_back_final_0.pb.gz', 'held_back_partial_2.pb.gz']);
  });

  it('a refused client that never reads does not keep its connection: it is closed after the reply linger', async () => {
    for (const listen of ['127.0.0.1:0', `unix:${join(tmp, 'linger.sock')}`]) {
      const logged: string[] = [];
      const col = await startCollector(base({ listen, maxClients: 1, log: (l) => logged.push(l) }));
      const holder = await connectSampler(col.address);
      await holder.flush();
      while (col.stats().clients < 1) await new Promise((r) => setTimeout(r, 10));
      const path = col.address.startsWith('unix:') ? col.address.slice(5) : undefined;
      const mute = path ? connect({ path }) : connect({ host: '127.0.0.1', port: Number(col.address.split(':').pop()) });
      mute.on('error', () => {});
      mute.pause(); // never reads: the reply line stays unread and the client never closes
      while (!logged.some((l) => l.startsWith('refused a client'))) await new Promise((r) => setTimeout(r, 10));
      holder.destroy();
      // close() resolves only once every connection is gone, the refused one included: it would
      // wait forever if the collector kept the connection until the client closes it.
      const s = await col.close();
      expect(s.refused, listen).toBe(1);
      mute.destroy();
    }
  });

  it('a client without the reply (collector gone before answering) is an error, not "sent"', async () => {
    const ac = new AbortController();
    const col = await startCollector(base({ signal: ac.signal }));
    const c = await connectSampler(col.address);
    await c.send({ method: 'SetProcessInfo', processName: 'cut_short' });
    await c.flush();
    while (col.stats().clients < 1) await new Promise((r) => setTimeout(r, 10));
    ac.abort();
    await col.done;
    await expect(c.close()).rejects.toMatchObject({ code: 'PROFKIT_E_NETWORK', message: expect.stringMatching(/ended the connection: the collector stopped \(signal\)/) });
  });

  it('serve warns on a non-loopback --listen address (stderr, or in the --json document), not on loopback or unix sockets', async () => {
    const cmd = fuchsiaSampler.commands!.find((c) => c.name === 'fuchsia-sampler serve')!;
    const runServe = async (listen: string, json = false) => {
      const out = freshDir();
      const x = makeCtx([], { listen, out, timeout: '0.05' });
      x.ctx.json = json;
      expect(await cmd.run(x.ctx)).toBe(0);
      return { ...x, dir: out };
    };
    const wild = await runServe('0.0.0.0:0');
    expect(wild.err()).toContain(`warning: listening on the non-loopback address 0.0.0.0: anyone who can reach it can send records to this collector and fill ${wild.dir} with profiles\n`);
    const wild6 = await runServe('[::]:0');
    expect(wild6.err()).toMatch(/^warning: listening on the non-loopback address \[::\]: anyone/m);
    const json = await runServe('0.0.0.0:0', true);
    expect(json.err()).toBe('');
    expect(JSON.parse(json.out().split('\n')[0]!).warnings).toEqual([{ code: 'PROFKIT_W_NON_LOOPBACK_LISTEN', message: expect.stringMatching(/^listening on the non-loopback address 0\.0\.0\.0: /) }]);
    for (const local of ['127.0.0.1:0', '[::1]:0', `unix:${join(tmp, 'warn.sock')}`]) {
      const r = await runServe(local);
      expect(r.err(), local).not.toMatch(/warning/);
    }
  });
});
