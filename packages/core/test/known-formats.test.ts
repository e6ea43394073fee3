/**
 * Issue 15 item 17: inputs of well-known formats no installed adapter reads are named in the
 * detection error (`PROFKIT_E_UNKNOWN_FORMAT` with `detail.format`) instead of "ambiguous or
 * unknown format (all 0.00)"; an installed adapter for such a format still wins.
 * The V8 and trace-event inputs are made by this Node (--cpu-prof, --heap-prof, --trace-events).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { rejectionOf } from '@profkit/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCodes, ProfkitError, createProfile, createRegistry, defineAdapter, recognizeKnownFormat } from '../src/node/index.js';

const enc = (s: string) => new TextEncoder().encode(s);
const tmp = mkdtempSync(join(tmpdir(), 'profkit-known-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs a little JavaScript in a child Node with `flags` in `dir`; returns the one file it leaves. */
function nodeOutput(flags: string[], name: string): Uint8Array {
  const dir = join(tmp, name);
  mkdirSync(dir); // Node waits forever when the trace file's directory is missing
  execFileSync(process.execPath, [...flags, '-e', 'let s = 0; for (let i = 0; i < 3e6; i++) s += Math.sqrt(i); const a = []; for (let i = 0; i < 2e4; i++) a.push({ i });'], { cwd: tmp, env: { ...process.env, NODE_OPTIONS: '' }, timeout: 30_000 });
  return readFileSync(join(dir, readdirSync(dir)[0]!));
}

// An adapter that reads none of these (the registry needs some adapter to score).
const other = defineAdapter({ name: 'other', formats: [{ id: 'other', extensions: ['.other'], binary: false }], sniff: () => 0, read: async () => ({ profile: createProfile(), warnings: [] }) });

const real = new Map<string, Uint8Array>();
beforeAll(() => {
  real.set('v8-cpuprofile', nodeOutput(['--cpu-prof', '--cpu-prof-dir', join(tmp, 'cpu')], 'cpu'));
  real.set('v8-heapprofile', nodeOutput(['--heap-prof', '--heap-prof-dir', join(tmp, 'heap')], 'heap'));
  real.set('chrome-trace', nodeOutput(['--trace-event-categories', 'v8,node', '--trace-event-file-pattern', join(tmp, 'trace', 'trace.json')], 'trace'));
}, 60_000);

const PERF_SCRIPT = [
  '# ========',
  '# captured on    : Tue Nov 24 10:00:00 2026',
  '# ========',
  '#',
  'python3  4121/4121  [002] 12345.678901:     250000 cpu-clock:pppH: ',
  '\t          4f1e2a _PyEval_EvalFrameDefault+0x1a (/usr/bin/python3.11)',
  '\t          53c1d0 PyObject_Call+0x50 (/usr/bin/python3.11)',
  '',
].join('\n');

const SYNTHETIC: [string, Uint8Array][] = [
  ['v8-cpuprofile', enc('{\n  "head": {"functionName": "(root)", "url": "", "lineNumber": 0, "hitCount": 0, "children": []},\n  "startTime": 1, "endTime": 2, "samples": [], "timestamps": []}')],
  ['v8-heapsnapshot', enc('{"snapshot":{"meta":{"node_fields":["type","name","id"],"node_types":[[]]}}')],
  ['chrome-trace', enc('[{"name":"RunTask","cat":"toplevel","ph":"X","ts":1234,"dur":5,"pid":1,"tid":2,"args":{}},')],
  ['speedscope', enc('{"exporter":"speedscope@1.15.0","$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[]}}')],
  ['perf-data', new Uint8Array([...enc('PERFILE2'), 0x68, 0, 0, 0, 0, 0, 0, 0, ...new Uint8Array(96)])],
  ['perf-script', enc(PERF_SCRIPT)],
  ['jfr', new Uint8Array([0x46, 0x4c, 0x52, 0x00, 0x00, 0x02, 0x00, 0x01, ...new Uint8Array(60)])],
  ['hprof', enc('JAVA PROFILE 1.0.2\0\0\0\0\x08')],
  ['go-trace', enc('go 1.22 trace\0\0\0\x01\x02')],
  ['callgrind', enc('# callgrind format\nversion: 1\ncreator: callgrind-3.22.0\nevents: Ir\n')],
  ['nettrace', enc('Nettrace\x14\0\0\0!FastSerialization.1')],
];

describe('recognizeKnownFormat', () => {
  it('recognizes real V8 CPU and heap profiles and a trace-event file made by Node', () => {
    for (const [format, bytes] of real) expect([format, recognizeKnownFormat(bytes.subarray(0, 4096))?.format]).toEqual([format, format]);
  });

  it('recognizes each known signature', () => {
    for (const [format, bytes] of SYNTHETIC) expect([format, recognizeKnownFormat(bytes)?.format]).toEqual([format, format]);
  });

  it('does not claim formats profkit reads, nor JSON or text of other shapes', () => {
    for (const s of [
      'sample.interval=20000\n"f" "main" \n',
      'main;f;g 12\n',
      'heap profile:    1:   1024 [     1:   1024] @ heap/1048576\n',
      '{"a":1}',
      '[1,2,3]',
      '[{"ph":"X"}]',
      '{"nodes":[]}',
      '{"head":{"id":1}}',
      'go 1.22 tracer',
      'plain words: 12.5: something\n  not a frame\n',
    ]) expect([s, recognizeKnownFormat(enc(s))]).toEqual([s, undefined]);
    expect(recognizeKnownFormat(new Uint8Array(0))).toBeUndefined();
  });

  it('finishes on heads built to make backtracking patterns explode (4 KiB each)', () => {
    for (const s of [
      'a 1 ' + '1'.repeat(4092),
      'x ' + '1 '.repeat(2047),
      'x 1/1 [1] ' + '1.1: '.repeat(800),
      '[{' + '"ph":"X",'.repeat(450),
      '{"$schema":"' + 'a'.repeat(4080),
      '{"nodes":[{' + ' '.repeat(4080),
      ' \t'.repeat(2048),
    ]) expect(recognizeKnownFormat(enc(s))).toBeUndefined();
  });
});

describe('registry detection names the format', () => {
  const registry = createRegistry([other]);

  it('a V8 .cpuprofile is PROFKIT_E_UNKNOWN_FORMAT with detail.format, plain and gzipped', async () => {
    for (const [bytes, fileName] of [
      [real.get('v8-cpuprofile')!, 'CPU.cpuprofile'],
      [gzipSync(real.get('v8-cpuprofile')!), 'CPU.cpuprofile.gz'],
    ] as const) {
      const e = await rejectionOf<ProfkitError>(registry.read(bytes, { fileName }));
      expect(e.code).toBe(ErrorCodes.UNKNOWN_FORMAT);
      expect(e.detail.format).toBe('v8-cpuprofile');
      expect(e.detail.file).toBe(fileName);
      expect(e.message).toMatch(/^this looks like a V8 CPU profile \(\.cpuprofile JSON.*; no installed adapter reads it; it is read by @profkit\/v8: run `npm install @profkit\/v8` and add it to profkit\.config\.json's "adapters"$/);
      expect(e.message).not.toContain('0.00');
    }
  });

  it('detect() reports the recognized format with problem unknown; every signature gives its error', async () => {
    for (const [format, bytes] of [...SYNTHETIC, ...real]) {
      const d = await registry.detectFile(bytes, 'x');
      expect([format, d.problem, d.recognized?.format, d.format]).toEqual([format, 'unknown', format, undefined]);
      const e = await rejectionOf<ProfkitError>(registry.read(bytes, { fileName: 'x' }));
      expect([format, e.code, e.detail.format]).toEqual([format, ErrorCodes.UNKNOWN_FORMAT, format]);
    }
  });

  it('speedscope and perf script point at their adapters; once an adapter reads the format it wins', async () => {
    const speedscope = SYNTHETIC.find(([f]) => f === 'speedscope')![1];
    const e = await rejectionOf<ProfkitError>(registry.read(speedscope, { fileName: 'p.json' }));
    expect(e.message).toContain('read by @profkit/speedscope: run `npm install @profkit/speedscope`');
    const perf = SYNTHETIC.find(([f]) => f === 'perf-script')![1];
    expect((await rejectionOf<ProfkitError>(registry.read(perf, { fileName: 'p.txt' }))).message).toContain('read by @profkit/perf: run `npm install @profkit/perf`');
    const reader = defineAdapter({
      name: 'speedscope',
      formats: [{ id: 'speedscope', extensions: ['.speedscope.json'], binary: false }],
      sniff: (head) => (new TextDecoder().decode(head).includes('speedscope.app/file-format-schema') ? 1 : 0),
      read: async () => ({ profile: createProfile(), warnings: [] }),
    });
    const withReader = createRegistry([other, reader]);
    const d = await withReader.detectFile(speedscope, 'p.json');
    expect([d.format, d.recognized]).toEqual(['speedscope', undefined]);
    expect((await withReader.read(speedscope, { fileName: 'p.json' })).adapter).toBe('speedscope');
  });

  it('an unrecognized input keeps the scores message', async () => {
    const e = await rejectionOf<ProfkitError>(registry.read(enc('hello world\n'), { fileName: 'x.txt' }));
    expect(e.code).toBe(ErrorCodes.UNKNOWN_FORMAT);
    expect(e.message).toContain('ambiguous or unknown format (scores: other 0.00)');
    expect(e.detail.format).toBeUndefined();
  });
});
