import { execFileSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { rejectionOf, thrownBy } from '@profkit/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ErrorCodes,
  ProfileBuilder,
  ProfkitError,
  SNIFF_HEAD_BYTES,
  createProfile,
  createRegistry,
  defineAdapter,
  resolveStack,
  type Adapter,
  type Profile,
  type SniffHints,
} from '../src/node/index.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-registry-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const coreVersion = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version as string;

function text(head: Uint8Array): string {
  return new TextDecoder().decode(head);
}

const catchError = (f: () => unknown) => thrownBy<ProfkitError>(f);

const rejection = (p: Promise<unknown>) => rejectionOf<ProfkitError>(p);

/**
 * A tiny "stacks" text format for tests: first line `#stacks`, then `root;...;leaf value` lines.
 * The adapter is lazy (load) and counts how often its codec is loaded.
 */
function stacksAdapter(opts: { name?: string; id?: string; header?: string; ext?: string[]; priority?: number; invalid?: boolean } = {}) {
  const header = opts.header ?? '#stacks';
  const state = { loads: 0, chunked: 0 };
  const adapter = defineAdapter({
    name: opts.name ?? 'stacks',
    formats: [{ id: opts.id ?? 'stacks', extensions: opts.ext ?? ['.stacks'], binary: false, write: true }],
    priority: opts.priority,
    sniff: (head) => (text(head).startsWith(header) ? 1 : 0),
    load: async () => {
      state.loads++;
      return {
        async read(input) {
          let all = '';
          if (input.fileName.endsWith('.chunked')) {
            for await (const c of input.chunks()) {
              state.chunked++;
              all += new TextDecoder().decode(c, { stream: true });
            }
          } else {
            all = new TextDecoder().decode(await input.bytes());
          }
          const lines = all.split('\n').filter((l) => l && !l.startsWith('#'));
          const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
          lines.forEach((l, i) => {
            const m = /^(\S+) (\d+)$/.exec(l);
            if (!m) throw new ProfkitError(ErrorCodes.PARSE, `bad line`, { line: i + 2, rule: 'stack value' });
            const ids = m[1]!.split(';').reverse().map((name) => b.internLocation({ functionId: b.internFunction({ name }) }));
            b.addSample(ids, [BigInt(m[2]!)]);
          });
          if (opts.invalid) b.addSample([4242], [1]);
          return { profile: b.build(), warnings: [] };
        },
        async write(profile) {
          let out = `${header}\n`;
          for (let i = 0; i < profile.samples.value.length; i++) {
            out += resolveStack(profile, i).map((f) => f.name).reverse().join(';') + ' ' + profile.samples.value[i] + '\n';
          }
          return { data: new TextEncoder().encode(out), warnings: [{ code: 'PROFKIT_W_TEST', message: 'test warning' }] };
        },
      };
    },
  });
  return { adapter, state };
}

function scored(name: string, score: number | ((head: Uint8Array, hints: SniffHints) => number), extra: Partial<Parameters<typeof defineAdapter>[0]> = {}): Adapter {
  return defineAdapter({
    name,
    formats: [{ id: name, extensions: [`.${name}`], binary: false }],
    sniff: typeof score === 'number' ? () => score : score,
    read: async () => ({ profile: createProfile(), warnings: [] }),
    ...extra,
  });
}

const head = new TextEncoder().encode('some content');

describe('detection', () => {
  it('picks a score >= 0.9 even when the runner-up is close', () => {
    const r = createRegistry([scored('a', 0.85), scored('b', 0.95)]);
    const d = r.detect(head);
    expect(d.format).toBe('b');
    expect(d.scores.map((s) => [s.adapter, s.score])).toEqual([
      ['b', 0.95],
      ['a', 0.85],
    ]);
  });

  it('picks a score >= 0.5 only when it leads by 0.2', () => {
    expect(createRegistry([scored('a', 0.7), scored('b', 0.5)]).detect(head).format).toBe('a');
    const d = createRegistry([scored('a', 0.7), scored('b', 0.6)]).detect(head);
    expect(d.format).toBeUndefined();
    expect(d.problem).toBe('ambiguous');
    expect(createRegistry([scored('a', 0.6)]).detect(head).format).toBe('a');
    expect(createRegistry([scored('a', 0.45)]).detect(head).problem).toBe('unknown');
  });

  it('fails on ambiguity with an error listing every score', () => {
    const r = createRegistry([scored('a', 0.7), scored('b', 0.6), scored('c', 0)]);
    const e = catchError(() => r.detectOrThrow(head, { fileName: 'x.bin' }));
    expect(e.code).toBe(ErrorCodes.UNKNOWN_FORMAT);
    expect(e.message).toContain('ambiguous or unknown format');
    expect(e.message).toContain('a 0.70, b 0.60, c 0.00');
    expect(e.message).toContain('--from');
    expect(e.detail.file).toBe('x.bin');
  });

  it('fails on unknown input, listing the zero scores', () => {
    const r = createRegistry([scored('a', 0), scored('b', 0.1)]);
    const e = catchError(() => r.detectOrThrow(head));
    expect(e.code).toBe(ErrorCodes.UNKNOWN_FORMAT);
    expect(e.message).toContain('b 0.10, a 0.00');
  });

  it('breaks equal scores by priority, and calls equal priorities ambiguous', () => {
    expect(createRegistry([scored('a', 0.9), scored('b', 0.9, { priority: 5 })]).detect(head).format).toBe('b');
    expect(createRegistry([scored('a', 0.9), scored('b', 0.9)]).detect(head).problem).toBe('ambiguous');
  });

  it('counts a sniff that throws as 0 and says so in explain', () => {
    const r = createRegistry([
      scored('bad', () => {
        throw new Error('boom');
      }),
      scored('good', 0.95),
    ]);
    const d = r.detect(head);
    expect(d.format).toBe('good');
    const bad = r.explain(head).find((s) => s.adapter === 'bad')!;
    expect(bad.score).toBe(0);
    expect(bad.error).toBe('boom');
  });

  it('clamps out-of-range and non-numeric scores and keeps reasons and format choices', () => {
    const multi = defineAdapter({
      name: 'multi',
      formats: [
        { id: 'm1', extensions: ['.m1'], binary: false },
        { id: 'm2', extensions: ['.m2'], binary: false },
      ],
      sniff: () => ({ score: 7, format: 'm2', reason: 'magic' }),
      read: async () => ({ profile: createProfile(), warnings: [] }),
    });
    const r = createRegistry([multi, scored('nan', Number.NaN), scored('neg', -3)]);
    const s = r.explain(head);
    expect(s[0]).toMatchObject({ adapter: 'multi', format: 'm2', score: 1, reason: 'magic' });
    expect(s.slice(1).map((x) => x.score)).toEqual([0, 0]);
    expect(r.detect(head).format).toBe('m2');
  });

  it('names empty input as the cause', async () => {
    const r = createRegistry([scored('a', 0)]);
    const p = join(tmp, 'empty.a');
    writeFileSync(p, '');
    const e = await rejection(r.read(p));
    expect(e.code).toBe(ErrorCodes.EMPTY_INPUT);
    expect(e.message).toContain('empty');
    expect(e.detail.file).toBe(p);
  });

  it('sniffs the inflated head of gzip input (4 KiB of it), with encoding=gzip', async () => {
    const seen: { len: number; enc: unknown; start: string }[] = [];
    const a = scored('spy', (h, hints) => {
      seen.push({ len: h.length, enc: hints.encoding, start: text(h.subarray(0, 7)) });
      return text(h).startsWith('#stacks') ? 1 : 0;
    });
    const r = createRegistry([a]);
    // Incompressible-ish content larger than the head, so the raw head alone would not be enough.
    let body = '#stacks\n';
    for (let i = 0; body.length < 200_000; i++) body += `f${(i * 2654435761) % 1000003};g${i} ${i}\n`;
    const p = join(tmp, 'big.stacks.gz');
    writeFileSync(p, gzipSync(body));
    const d = await r.detectFile(p);
    expect(d.format).toBe('spy');
    expect(d.encoding).toBe('gzip');
    expect(seen.at(-1)).toEqual({ len: SNIFF_HEAD_BYTES, enc: 'gzip', start: '#stacks' });
  });

  it('reports truncated gzip input as truncated', async () => {
    const r = createRegistry([scored('a', 0)]);
    const gz = gzipSync('#stacks\na 1\n');
    const p = join(tmp, 'trunc.gz');
    writeFileSync(p, gz.subarray(0, 10)); // the gzip header only
    const e = await rejection(r.read(p));
    expect(e.code).toBe(ErrorCodes.TRUNCATED);
    expect(e.message).toContain('truncated');
  });

  it('names the npm package of a first-party format recognized by extension', async () => {
    const r = createRegistry([scored('a', 0)]);
    const p = join(tmp, 'cpu.pb.gz');
    writeFileSync(p, gzipSync(Buffer.from([0x0a, 0x04, 0x08, 0x01, 0x10, 0x02])));
    const e = await rejection(r.read(p));
    expect(e.code).toBe(ErrorCodes.UNKNOWN_FORMAT);
    expect(e.message).toContain('npm install @profkit/pprof');
    expect(e.detail.install).toBe('npm install @profkit/pprof');
    // Also for --from / --to with a first-party id, and for an output extension.
    const e2 = await rejection(r.read(p, { format: 'rprof' }));
    expect(e2.code).toBe(ErrorCodes.NO_ADAPTER);
    expect(e2.message).toContain('npm install @profkit/rprof');
    const e3 = catchError(() => r.writerFor(join(tmp, 'out.heap')));
    expect(e3.code).toBe(ErrorCodes.NO_ADAPTER);
    expect(e3.message).toContain('npm install @profkit/gperftools-heap');
  });

  it('gives no install hint when the format is installed, or the name matches nothing first-party', () => {
    const pprofLike = scored('pprof', 0);
    const r = createRegistry([pprofLike]);
    expect(r.detect(head, { fileName: 'cpu.pb.gz' }).installHint).toBeUndefined();
    expect(createRegistry([]).detect(head, { fileName: 'x.unknownext' }).installHint).toBeUndefined();
  });
});

describe('registration', () => {
  it('refuses an unsupported apiVersion with the upgrade message', () => {
    const v2 = { ...scored('future', 0), apiVersion: 2 };
    const e = catchError(() => createRegistry().register(v2));
    expect(e.code).toBe(ErrorCodes.ADAPTER_API);
    expect(e.message).toBe(`adapter future targets adapter API 2; @profkit/core ${coreVersion} supports 1; upgrade @profkit/core`);
    const v0 = { ...scored('old', 0), apiVersion: 0, packageName: 'profkit-adapter-old' };
    expect(catchError(() => createRegistry().register(v0)).message).toContain('upgrade the adapter profkit-adapter-old');
  });

  it('checks the shape of an adapter, naming every problem', () => {
    const e = catchError(() => createRegistry().register({ apiVersion: 1, name: 'x', formats: [{ id: 'x', extensions: ['txt'], binary: 'no' }] }));
    expect(e.code).toBe(ErrorCodes.ADAPTER_SHAPE);
    expect(e.message).toContain('formats.0.extensions.0');
    expect(e.message).toContain('formats.0.binary');
    expect(e.message).toContain('sniff');
    expect(catchError(() => createRegistry().register('pprof')).code).toBe(ErrorCodes.ADAPTER_SHAPE);
    const noCodec = { apiVersion: 1, name: 'y', formats: [{ id: 'y', extensions: [], binary: true }], sniff: () => 0 };
    expect(catchError(() => createRegistry().register(noCodec)).message).toContain('read, write or load');
  });

  it('refuses duplicate names, format ids and commands unless overriding', () => {
    const r = createRegistry([scored('a', 0)]);
    const dupName = catchError(() => r.register(scored('a', 1)));
    expect(dupName.code).toBe(ErrorCodes.ADAPTER_DUPLICATE);
    expect(dupName.message).toContain('duplicate adapter name "a"');
    const other = defineAdapter({ name: 'other', formats: [{ id: 'a', extensions: [], binary: false }], sniff: () => 0, read: async () => ({ profile: createProfile(), warnings: [] }) });
    const dupFormat = catchError(() => r.register(other));
    expect(dupFormat.code).toBe(ErrorCodes.ADAPTER_DUPLICATE);
    expect(dupFormat.message).toContain('duplicate format id "a"');
    const cmd = { name: 'go', summary: 's', usage: 'u', run: async () => 0 };
    r.register(scored('c1', 0, { commands: [cmd] }));
    expect(catchError(() => r.register(scored('c2', 0, { commands: [cmd] }))).message).toContain('duplicate command "go"');
    // override replaces the adapter of that name
    const replacement = scored('a', 0.99);
    r.register(replacement, { override: true });
    expect(r.get('a')).toBe(replacement);
    expect(r.list().filter((e) => e.adapter.name === 'a')).toHaveLength(1);
    // registering the very same object twice is harmless
    expect(() => r.register(replacement)).not.toThrow();
  });

  it('lists formats with read/write capability and the source', () => {
    const { adapter } = stacksAdapter();
    const r = createRegistry([adapter, scored('ro', 0)]);
    r.register(scored('flagged', 0), { source: { kind: 'flag', specifier: './x.js' } });
    const f = r.formats().map((x) => [x.format.id, x.read, x.write, x.source.kind]);
    expect(f).toEqual([
      ['stacks', true, true, 'programmatic'],
      ['ro', true, false, 'programmatic'],
      ['flagged', true, false, 'flag'],
    ]);
  });
});

describe('read and write', () => {
  it('reads gzip files through bytes() and chunks(), loading the codec lazily once', async () => {
    const { adapter, state } = stacksAdapter();
    const r = createRegistry([adapter]);
    expect(state.loads).toBe(0);
    const p = join(tmp, 'x.stacks.gz');
    writeFileSync(p, gzipSync('#stacks\nmain;work 3\nmain 2\n'));
    const res = await r.read(p);
    expect(res.gzipped).toBe(true);
    expect(res.format).toBe('stacks');
    expect(resolveStack(res.profile, 0).map((f) => f.name)).toEqual(['work', 'main']);
    expect(Array.from(res.profile.samples.value)).toEqual([3n, 2n]);
    const pc = join(tmp, 'y.chunked');
    writeFileSync(pc, gzipSync('#stacks\n' + 'main;work 1\n'.repeat(50_000)));
    const res2 = await r.read(pc);
    expect(res2.profile.samples.value.length).toBe(50_000);
    expect(state.chunked).toBeGreaterThan(0);
    expect(state.loads).toBe(1);
  });

  it.skipIf(process.platform === 'win32')('reads non-seekable inputs (a FIFO) once, whole', async () => {
    const { adapter } = stacksAdapter();
    const r = createRegistry([adapter]);
    const fifo = join(tmp, 'pipe.stacks');
    execFileSync('mkfifo', [fifo]);
    const writer = new Promise<void>((ok, fail) => {
      const w = createWriteStream(fifo);
      w.on('error', fail);
      w.end(gzipSync('#stacks\nmain;work 3\nmain 2\n'), ok);
    });
    const res = await r.read(fifo);
    await writer;
    expect(res.gzipped).toBe(true);
    expect(Array.from(res.profile.samples.value)).toEqual([3n, 2n]);
  });

  it('reads bytes in memory, gzip or not', async () => {
    const { adapter } = stacksAdapter();
    const r = createRegistry([adapter]);
    const a = await r.read(new TextEncoder().encode('#stacks\nf 1\n'), { fileName: 'mem' });
    const b = await r.read(gzipSync('#stacks\nf 1\n'), { fileName: 'mem.gz' });
    expect(resolveStack(a.profile, 0)[0]!.name).toBe('f');
    expect(resolveStack(b.profile, 0)[0]!.name).toBe('f');
    expect(b.gzipped).toBe(true);
  });

  it('enforces the decompressed-size limit on gzip input', async () => {
    const { adapter } = stacksAdapter();
    const r = createRegistry([adapter]);
    const e = await rejection(r.read(gzipSync('#stacks\n' + 'f 1\n'.repeat(10_000)), { fileName: 'bomb.gz', limits: { maxDecompressedBytes: 1000 } }));
    expect(e.code).toBe(ErrorCodes.LIMIT);
    expect(e.detail.option).toBe('maxDecompressedBytes');
  });

  it('adds the file name to reader errors and wraps non-profkit exceptions', async () => {
    const { adapter } = stacksAdapter();
    const r = createRegistry([adapter]);
    const p = join(tmp, 'bad.stacks');
    writeFileSync(p, '#stacks\nnot a valid line\n');
    const e = await rejection(r.read(p));
    expect(e.code).toBe(ErrorCodes.PARSE);
    expect(e.detail.file).toBe(p);
    expect(e.detail.line).toBe(2);
    expect(e.describe()).toBe(`${p}:2: bad line`);
    const crashing = defineAdapter({
      name: 'crash',
      formats: [{ id: 'crash', extensions: [], binary: false }],
      sniff: () => 1,
      read: async () => {
        throw new TypeError('x is undefined');
      },
    });
    const e2 = await rejection(createRegistry([crashing]).read(p));
    expect(e2.code).toBe('PROFKIT_E_ADAPTER_FAILED');
    expect(e2.message).toContain('x is undefined');
    expect(e2.detail.file).toBe(p);
  });

  it('validates what a reader produces', async () => {
    const { adapter } = stacksAdapter({ invalid: true });
    const r = createRegistry([adapter]);
    const p = join(tmp, 'inv.stacks');
    writeFileSync(p, '#stacks\nf 1\n');
    const e = await rejection(r.read(p));
    expect(e.code).toBe(ErrorCodes.INVALID_PROFILE);
    expect(e.detail.file).toBe(p);
    expect(e.message).toContain('4242');
    // validate: false hands back the invalid profile (for `profkit validate`).
    const res = await r.read(p, { validate: false });
    expect(res.profile.samples.value.length).toBe(2);
  });

  it('reads with an explicit format, skipping detection', async () => {
    const { adapter } = stacksAdapter({ header: '#other' });
    const r = createRegistry([adapter]);
    const p = join(tmp, 'noheader.txt');
    writeFileSync(p, 'f 1\n');
    await expect(r.read(p)).rejects.toMatchObject({ code: ErrorCodes.UNKNOWN_FORMAT });
    const res = await r.read(p, { format: 'stacks' });
    expect(res.profile.samples.value.length).toBe(1);
    await expect(r.read(p, { format: 'nope' })).rejects.toMatchObject({ code: ErrorCodes.NO_ADAPTER });
  });

  it('writes by the longest matching extension or by format, atomically, returning warnings', async () => {
    const short = stacksAdapter({ name: 'short', id: 'short', ext: ['.txt'], header: '#short' });
    const long = stacksAdapter({ name: 'long', id: 'long', ext: ['.long.txt'], header: '#long' });
    const r = createRegistry([short.adapter, long.adapter]);
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    b.addSample([b.internLocation({ functionId: b.internFunction({ name: 'f' }) })], [5]);
    const prof = b.build();
    const out1 = join(tmp, 'o.long.txt');
    const w = await r.write(prof, out1);
    expect(w.format).toBe('long');
    expect(w.warnings.map((x) => x.code)).toEqual(['PROFKIT_W_TEST']);
    expect(readFileSync(out1, 'utf8')).toBe('#long\nf 5\n');
    const out2 = join(tmp, 'o2.long.txt');
    expect((await r.write(prof, out2, { format: 'short' })).format).toBe('short');
    expect(readFileSync(out2, 'utf8')).toBe('#short\nf 5\n');
    expect(readdirSync(tmp).filter((n) => n.startsWith('.profkit-tmp-'))).toEqual([]);
    expect(catchError(() => r.writerFor(join(tmp, 'o.unknown'))).code).toBe(ErrorCodes.UNKNOWN_FORMAT);
    expect(catchError(() => r.writerFor('-')).code).toBe(ErrorCodes.USAGE);
  });

  it('refuses to clobber an input and to write an invalid profile', async () => {
    const { adapter } = stacksAdapter();
    const r = createRegistry([adapter]);
    const p = join(tmp, 'in.stacks');
    writeFileSync(p, '#stacks\nf 1\n');
    const { profile } = await r.read(p);
    const e = await rejection(r.write(profile, p, { inputs: [p] }));
    expect(e.code).toBe(ErrorCodes.CLOBBER);
    expect(readFileSync(p, 'utf8')).toBe('#stacks\nf 1\n');
    const broken: Profile = { ...profile, samples: { ...profile.samples, locations: { offsets: new Uint32Array([0, 1]), location_id: new Uint32Array([99]) } } };
    const out = join(tmp, 'never.stacks');
    const e2 = await rejection(r.write(broken, out));
    expect(e2.code).toBe(ErrorCodes.INVALID_PROFILE);
    expect(e2.message).toContain('refusing to write an invalid profile');
    expect(existsSync(out)).toBe(false);
  });

  it('can switch validation off or replace the validator', async () => {
    const { adapter } = stacksAdapter({ invalid: true });
    const p = join(tmp, 'inv2.stacks');
    writeFileSync(p, '#stacks\nf 1\n');
    await expect(createRegistry([adapter], { validator: null }).read(p)).resolves.toBeTruthy();
    const calls: string[] = [];
    const custom = createRegistry([stacksAdapter().adapter], {
      validator: (_p, o) => {
        calls.push(o.mode);
        return { ok: true, errorCount: 0, problems: [{ code: 'X', rule: 'r', table: 'samples', message: 'just a note', severity: 'warning' }] };
      },
    });
    const res = await custom.read(p);
    expect(calls).toEqual(['profkit']);
    expect(res.warnings.map((w) => w.message)).toEqual(['just a note']);
  });
});
