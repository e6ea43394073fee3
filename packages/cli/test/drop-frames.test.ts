/**
 * The views apply the profile's drop_frames/keep_frames on load, as `go tool pprof` does
 * (`RemoveUninteresting` when fetching): top/tree/peek/diff are compared with pprof on a built
 * profile.proto whose drop list looks like gperftools' (`malloc`, `tcmalloc::.*`, `operator
 * new`, a keep_frames exception, argument lists, inline frames, a root-side match), folded and
 * flame must not show dropped frames, `--no-drop-frames` shows them, and `convert` keeps them.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileBuilder, type LineInput, type Profile } from '@profkit/core/node';
import { loadRegistry } from '../src/config.js';
import { fromShowing, goAvailable, parseTop, pprof, profkit, repoRoot } from './views-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-drop-frames-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const DROP = 'malloc|calloc|tcmalloc::.*|operator new|(__)?posix_memalign';
const KEEP = 'tcmalloc::Keep';

/** Each frame is a function name, or `inner>outer` for a location with an inlined line; stacks innermost first. */
function heapLike(facts: { drop_frames?: string; keep_frames?: string }, salt = 0): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'alloc_objects', unit: 'count' }, { type: 'alloc_space', unit: 'bytes' }], facts: { ...facts, period: 1n } });
  const stacks: [string[], number][] = [
    [['tcmalloc::Grow', 'tcmalloc::Alloc(unsigned long)', 'malloc', 'Foo::Make(int)', 'main'], 4096],
    [['tcmalloc::Grow', 'operator new', 'Bar::Bar()', 'Foo::Make(int)', 'main'], 2048],
    [['tcmalloc::Alloc(unsigned long)', 'malloc>inlinedCaller', 'Baz', 'main'], 1024],
    [['tcmalloc::Keep', 'calloc', 'Qux', 'main'], 512 + salt],
    [['tcmalloc::Alloc(unsigned long)', 'tcmalloc::Keep', 'Qux', 'main'], 256],
    [['malloc', 'posix_memalign', 'main'], 128],
    // Root-side matches are kept until a frame that does not match has been seen.
    [['Leaf', 'malloc', 'calloc'], 64],
    [['Leaf2', 'Worker', 'malloc'], 32 + salt],
    [['Plain', 'main'], 8],
  ];
  for (const [frames, bytes] of stacks) {
    const ids = frames.map((fr) => {
      const [first, ...rest] = fr.split('>');
      const inlinedInto: LineInput[] = rest.map((n) => ({ functionId: b.internFunction({ name: n }), line: 2 }));
      return b.internLocation({ functionId: b.internFunction({ name: first! }), line: 1, inlinedInto });
    });
    b.addSample(ids, [BigInt(bytes >> 4), BigInt(bytes)]);
  }
  return b.build();
}

const file = join(tmp, 'heap-like.pb.gz');
const base = join(tmp, 'heap-like-base.pb.gz');
const badPattern = join(tmp, 'bad-pattern.pb.gz');
const hostile = join(tmp, 'hostile.pb.gz');

beforeAll(async () => {
  const { registry } = await loadRegistry({ cwd: repoRoot, adapters: ['@profkit/pprof'], discover: false });
  await registry.write(heapLike({ drop_frames: DROP, keep_frames: KEEP }), file);
  await registry.write(heapLike({ drop_frames: DROP, keep_frames: KEEP }, 100), base);
  await registry.write(heapLike({ drop_frames: 'malloc|(' }), badPattern);
  // (a+)+ backtracks exponentially in a JavaScript RegExp on a long run of a's that fails at the end
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }], facts: { drop_frames: '(a+)+|malloc' } });
  const loc = (n: string) => b.internLocation({ functionId: b.internFunction({ name: n }), line: 1 });
  b.addSample([loc('malloc'), loc('a'.repeat(64) + '!'), loc('main')], [1n]);
  await registry.write(b.build(), hostile);
});

async function ours(args: string[]): Promise<string> {
  const r = await profkit([...args, '--quiet']);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

describe.skipIf(!goAvailable)('views prune drop_frames/keep_frames like go tool pprof', () => {
  it('top: same rows and report lines as pprof -top, for every sample type and ordering', async () => {
    for (const [theirs, mine] of [
      [[], []],
      [['-cum'], ['--cum']],
      [['-sample_index=alloc_objects', '-nodefraction=0'], ['--sample-type', 'alloc_objects', '--node-fraction', '0']],
      [['-lines'], ['--by', 'line']],
    ] as [string[], string[]][]) {
      const g = pprof(['-top', '-symbolize=none', ...theirs, file], tmp);
      expect(g.code, g.stderr).toBe(0);
      const a = parseTop(await ours(['top', file, ...mine]));
      const b = parseTop(g.stdout);
      expect(a.rows).toEqual(b.rows);
      expect(a.labels).toEqual(b.labels);
    }
    const names = parseTop(await ours(['top', file, '--node-fraction', '0'])).rows.map((r) => r.name.replace(/ \((partial-)?inline\)$/, ''));
    for (const gone of ['operator new', 'tcmalloc::Grow', 'tcmalloc::Alloc(unsigned long)', 'posix_memalign']) expect(names).not.toContain(gone);
    // kept: by keep_frames, and root-side matches (before any frame that does not match)
    expect(names).toEqual(expect.arrayContaining(['tcmalloc::Keep', 'calloc', 'malloc', 'inlinedCaller']));
  });

  it('tree and peek: the report of pprof -tree / -peek', async () => {
    const t = pprof(['-tree', '-symbolize=none', file], tmp);
    expect(fromShowing(await ours(['tree', file]))).toBe(fromShowing(t.stdout));
    const p = pprof(['-peek', 'Foo|Qux', '-symbolize=none', file], tmp);
    expect(fromShowing(await ours(['peek', file, 'Foo|Qux']))).toBe(fromShowing(p.stdout));
  });

  it('diff: pprof -diff_base prunes the combined profile with the new profile\'s patterns', async () => {
    const g = pprof(['-top', '-symbolize=none', '-diff_base', base, file], tmp);
    expect(g.code, g.stderr).toBe(0);
    const a = parseTop(await ours(['diff', base, file]));
    expect(a.rows).toEqual(parseTop(g.stdout).rows);
  });

  it('--no-drop-frames shows the dropped frames (pprof cannot: compared with the profile without the patterns)', async () => {
    const plain = join(tmp, 'plain.pb.gz');
    const { registry } = await loadRegistry({ cwd: repoRoot, adapters: ['@profkit/pprof'], discover: false });
    await registry.write(heapLike({}), plain);
    const g = pprof(['-top', '-symbolize=none', plain], tmp);
    const a = parseTop(await ours(['top', file, '--no-drop-frames']));
    expect(a.rows).toEqual(parseTop(g.stdout).rows);
    expect(a.rows.map((r) => r.name)).toEqual(expect.arrayContaining(['operator new', 'tcmalloc::Grow']));
  });

  it('an invalid pattern leaves the profile unpruned, as in pprof, with a warning', async () => {
    const g = pprof(['-top', '-symbolize=none', badPattern], tmp);
    expect(g.code, g.stderr).toBe(0);
    const r = await profkit(['top', badPattern]);
    expect(r.code, r.stderr).toBe(0);
    expect(parseTop(r.stdout).rows).toEqual(parseTop(g.stdout).rows);
    expect(r.stderr).toContain('PROFKIT_W_DROP_FRAMES_INVALID');
  });
});

describe('hostile patterns', () => {
  it('drop_frames is matched in linear time (Go RE2): (a+)+ against a long name does not hang top', async () => {
    const rows = parseTop(await ours(['top', hostile])).rows.map((r) => r.name);
    expect(rows).toEqual(['a'.repeat(64) + '!', 'main']);
  });
});

describe('which commands prune', () => {
  it('folded and flame leave out the dropped frames; --no-drop-frames keeps them', async () => {
    const folded = await ours(['folded', file]);
    expect(folded).not.toMatch(/operator new|tcmalloc::Grow|tcmalloc::Alloc|posix_memalign/);
    expect(folded).toMatch(/;tcmalloc::Keep \d+$/m);
    expect(await ours(['folded', file, '--no-drop-frames'])).toMatch(/;malloc;tcmalloc::Alloc\(unsigned long\);tcmalloc::Grow \d+$/m);
    const svg = join(tmp, 'f.svg');
    await ours(['flame', file, '-o', svg]);
    expect(readFileSync(svg, 'utf8')).not.toContain('operator new');
  });

  it('convert keeps every frame and the patterns (lossless)', async () => {
    const out = join(tmp, 'converted.pb.gz');
    await ours(['convert', file, out]);
    const info = JSON.parse(await ours(['info', out, '--json']));
    expect(info.dropFrames).toBe(DROP);
    expect(await ours(['folded', out, '--no-drop-frames'])).toBe(await ours(['folded', file, '--no-drop-frames']));
  });
});
