import { describe, expect, it } from 'vitest';
import {
  ErrorCodes,
  ProfileBuilder,
  ProfileIndex,
  ProfkitError,
  prune,
  pruneFrom,
  removeUninteresting,
  applyDropFrames,
  resolveStack,
  simplifyFunctionName,
  type LineInput,
  type Profile,
} from '../src/node/index.js';

/** Each frame is a function name, or `inner>outer` for a location with an inlined line. */
function build(stacks: string[][], facts: { drop_frames?: string; keep_frames?: string } = {}): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }], facts });
  stacks.forEach((frames, i) => {
    const ids = frames.map((fr) => {
      const [first, ...rest] = fr.split('>');
      const inlinedInto: LineInput[] = rest.map((n) => ({ functionId: b.internFunction({ name: n }), line: 1 }));
      return b.internLocation({ functionId: b.internFunction({ name: first! }), line: 1, inlinedInto });
    });
    b.addSample(ids, [i + 1]);
  });
  return b.build();
}

function stacks(p: Profile): string[] {
  const idx = new ProfileIndex(p);
  return Array.from({ length: p.samples.value.length }, (_, i) => `${resolveStack(p, i, idx).map((f) => f.name).join(' <- ')} = ${p.samples.value[i]}`);
}

describe('simplifyFunctionName', () => {
  it('removes a leading dot and argument lists, but not reserved names', () => {
    expect(simplifyFunctionName('.malloc')).toBe('malloc');
    expect(simplifyFunctionName('malloc(unsigned long)')).toBe('malloc');
    expect(simplifyFunctionName('(anonymous namespace)::Foo(int)')).toBe('(anonymous namespace)::Foo');
    expect(simplifyFunctionName('Foo::operator()(int) const')).toBe('Foo::operator()');
    expect(simplifyFunctionName('ns::(anonymous namespace)::x::operator()')).toBe('ns::(anonymous namespace)::x::operator()');
    expect(simplifyFunctionName('(x)')).toBe('');
  });
});

describe('prune', () => {
  it('drops the matching frame and everything beneath it (spec example)', () => {
    const p = build([['malloc', 'tc_new', 'Foo', 'main']]);
    expect(stacks(prune(p, { dropFrames: 'malloc|tc_new' }))).toEqual(['Foo <- main = 1']);
  });

  it('matches the whole simplified name and honours keepFrames', () => {
    const p = build([
      ['malloc(int)', 'tc_new', 'Foo', 'main'],
      ['mallocx', 'Foo', 'main'],
    ]);
    expect(stacks(prune(p, { dropFrames: 'malloc|tc_.*', keepFrames: 'tc_new' }))).toEqual(['tc_new <- Foo <- main = 1', 'mallocx <- Foo <- main = 2']);
  });

  it('never prunes root-side frames before the first frame that does not match', () => {
    const p = build([
      ['a', 'malloc', 'main'],
      ['malloc', 'main'],
    ]);
    // From the root: main matches drop (skipped, no user frame yet), malloc matches (skipped) ...
    expect(stacks(prune(p, { dropFrames: 'main|malloc' }))).toEqual(['a <- malloc <- main = 1', 'malloc <- main = 2']);
  });

  it('prunes inside a location: an inlined match keeps the outer lines', () => {
    // `malloc` inlined into `Foo` (one location), called from main.
    const p = build([['leaf', 'malloc>Foo', 'main']]);
    expect(stacks(prune(p, { dropFrames: 'malloc' }))).toEqual(['Foo <- main = 1']);
    // A match on the outermost line removes the whole location.
    const q = build([['leaf', 'Foo>malloc', 'main']]);
    expect(stacks(prune(q, { dropFrames: 'malloc' }))).toEqual(['main = 1']);
  });

  it('pprof PruneFrom doc example: Prune(B) vs PruneFrom(B) on [A,B,C,B,D]', () => {
    const p = build([['A', 'B', 'C', 'B', 'D']]);
    expect(stacks(prune(p, { dropFrames: 'B' }))).toEqual(['D = 1']);
    expect(stacks(prune(p, { dropFrames: 'A' }))).toEqual(['B <- C <- B <- D = 1']);
    expect(stacks(pruneFrom(p, 'B'))).toEqual(['B <- C <- B <- D = 1']);
    expect(stacks(pruneFrom(p, '^A$'))).toEqual(['A <- B <- C <- B <- D = 1']);
    // pruneFrom inside a location keeps the matching line and its callers.
    const q = build([['x>B>y', 'D']]);
    expect(stacks(pruneFrom(q, '^B$'))).toEqual(['B <- y <- D = 1']);
  });

  it('removeUninteresting uses the profile drop_frames/keep_frames', () => {
    const p = build([['malloc', 'tc_new', 'Foo', 'main']], { drop_frames: 'malloc|tc_new', keep_frames: 'tc_new' });
    expect(stacks(removeUninteresting(p))).toEqual(['tc_new <- Foo <- main = 1']);
    const q = build([['malloc', 'main']]);
    expect(stacks(removeUninteresting(q))).toEqual(['malloc <- main = 1']);
  });

  it('applyDropFrames: prunes with the profile patterns, returns the input itself when nothing matches, warns on a bad pattern', async () => {
    const p = build([['malloc', 'tc_new', 'Foo', 'main']], { drop_frames: 'malloc|tc_new', keep_frames: 'tc_new' });
    const a = await applyDropFrames(p);
    expect(a.pruned).toBe(true);
    expect(stacks(a.profile)).toEqual(['tc_new <- Foo <- main = 1']);
    expect(a.profile['.profile'].drop_frames).toBe('malloc|tc_new');
    const q = build([['Foo', 'main']], { drop_frames: 'malloc' });
    expect(await applyDropFrames(q)).toEqual({ profile: q, pruned: false, warnings: [] });
    // another profile's patterns (a diff applies the new profile's to the combined profile)
    expect(stacks((await applyDropFrames(q, { drop_frames: 'Foo', keep_frames: '' })).profile)).toEqual(['main = 1']);
    const bad = build([['malloc', 'main']], { drop_frames: 'malloc|(' });
    const b = await applyDropFrames(bad);
    expect(b.profile).toBe(bad);
    expect(b.warnings.map((w) => [w.code, w.detail?.option])).toEqual([['PROFKIT_W_DROP_FRAMES_INVALID', 'drop_frames']]);
    const badKeep = await applyDropFrames(build([['malloc', 'main']], { drop_frames: 'malloc', keep_frames: '[' }));
    expect(badKeep.pruned).toBe(false);
    expect(badKeep.warnings[0]?.detail?.option).toBe('keep_frames');
  });

  it('applyDropFrames compiles the patterns as Go RE2: its syntax, its errors, and linear time on a hostile pattern', async () => {
    // POSIX classes and \Q…\E are RE2 (JavaScript reads them otherwise); lookahead is not RE2 (Go's compile fails, pprof prunes nothing)
    const p = build([['leaf', 'alloc', 'main']], { drop_frames: '[[:alpha:]]+c|\\Qa.b\\E' });
    expect(stacks((await applyDropFrames(p)).profile)).toEqual(['main = 1']);
    const look = await applyDropFrames(build([['leaf', 'alloc', 'main']], { drop_frames: 'alloc(?=x)?' }));
    expect(look.warnings[0]?.code).toBe('PROFKIT_W_DROP_FRAMES_INVALID');
    // (a+)+$ backtracks exponentially in a RegExp (this name takes years there); RE2 is linear
    const hostile = build([['a'.repeat(40) + '!', 'main']], { drop_frames: '(a+)+' });
    const r = await applyDropFrames(hostile);
    expect(r.pruned).toBe(false);
  });

  it('reports invalid regular expressions as usage errors', () => {
    const p = build([['a']]);
    try {
      prune(p, { dropFrames: '(' });
      expect.unreachable();
    } catch (e) {
      expect((e as ProfkitError).code).toBe(ErrorCodes.USAGE);
      expect((e as ProfkitError).detail.option).toBe('dropFrames');
    }
  });
});
