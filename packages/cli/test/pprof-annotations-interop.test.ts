/**
 * `-add_comment TEXT` and `-buildid ID` on the commands that write a profile (convert, filter,
 * merge), against `go tool pprof -proto -add_comment TEXT -buildid ID`: both outputs read back with
 * `go tool pprof -raw` show the same comment and the same mappings (the first one with ID; a
 * profile without mappings gets pprof's stand-in mapping 1). Producers: gperftools CPU, Java CPU
 * (no mappings), Go legacy heap, R (profile.proto). Normalisation as in pprof-text-interop.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { goPprofAsCompared } from './producers.js';
import { fixture, goAvailable, hasFixtures, profkit } from './views-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-annotations-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const FLAGS = ['-add_comment=built by CI #42', '-buildid=0123abcd'];

/** `go tool pprof -raw FILE`. */
function raw(file: string): string {
  const g = goPprofAsCompared(['-raw', file], tmp);
  expect(g.code, g.stderr).toBe(0);
  return g.stdout;
}

/** The comment lines and the mappings of a `-raw` text (what -add_comment and -buildid change). */
const annotations = (rawText: string) => ({
  comments: rawText.split('\n').filter((l) => l.startsWith('Comment: ')),
  mappings: rawText.slice(rawText.indexOf('\nMappings\n')),
});

/** `go tool pprof -proto FLAGS INPUTS` written to `out`. */
function goProto(out: string, flags: string[], inputs: string[]): void {
  const g = goPprofAsCompared(['-proto', `-output=${out}`, ...flags, ...inputs], tmp);
  expect(g.code, g.stderr).toBe(0);
}

const T = 'pprof/profile/testdata/';
const FILES = [T + 'cppbench.cpu', T + 'java.cpu', T + 'gobench.heap', 'r-profile/inst/samples/proto/1.out.prof.pb.gz'];

describe.skipIf(!hasFixtures || !goAvailable)('-add_comment and -buildid = go tool pprof -proto', () => {
  it.each(FILES)('convert and filter of %s', async (rel) => {
    const src = fixture(rel);
    const theirs = join(tmp, 'theirs.pb.gz');
    goProto(theirs, FLAGS, [src]);
    const expected = raw(theirs);
    expect(expected).toContain('Comment: built by CI #42');
    expect(expected).toMatch(/^1: .* 0123abcd $/m);
    const converted = join(tmp, 'converted.pb.gz');
    const c = await profkit(['convert', src, converted, ...FLAGS, '--quiet']);
    expect(c.code, c.stderr).toBe(0);
    // Everything else of the profile is as pprof writes it too.
    expect(raw(converted)).toBe(expected);
    const filtered = join(tmp, 'filtered.pb.gz');
    const f = await profkit(['filter', src, '-o', filtered, ...FLAGS, '--quiet']);
    expect(f.code, f.stderr).toBe(0);
    expect(annotations(raw(filtered))).toEqual(annotations(expected));
  });

  it('merge: the build id of each input\'s first mapping, one comment on the merged profile', async () => {
    const inputs = [fixture(T + 'cppbench.cpu'), fixture(T + 'cppbench.cpu')];
    const theirs = join(tmp, 'theirs-merged.pb.gz');
    goProto(theirs, FLAGS, inputs);
    const merged = join(tmp, 'merged.pb.gz');
    const m = await profkit(['merge', ...inputs, '-o', merged, ...FLAGS, '--quiet']);
    expect(m.code, m.stderr).toBe(0);
    const ours = annotations(raw(merged));
    const expected = annotations(raw(theirs));
    expect(ours.comments).toEqual(expected.comments);
    // pprof names the main mapping of a merge after its source file; the build ids are the same.
    const buildIds = (mappings: string) => mappings.split('\n').map((l) => /^\d+: \S+ \S* ?(\S*) $/.exec(l)?.[1]);
    expect(buildIds(ours.mappings)).toEqual(buildIds(expected.mappings));
    expect(ours.mappings).toMatch(/^1: .* 0123abcd $/m);
  });

  it('an empty -add_comment or -buildid changes nothing, as in pprof', async () => {
    const src = fixture(T + 'cppbench.cpu');
    const theirs = join(tmp, 'theirs-empty.pb.gz');
    goProto(theirs, ['-add_comment=', '-buildid='], [src]);
    const ours = join(tmp, 'ours-empty.pb.gz');
    const c = await profkit(['convert', src, ours, '-add_comment=', '-buildid=', '--quiet']);
    expect(c.code, c.stderr).toBe(0);
    expect(raw(ours)).toBe(raw(theirs));
  });
});
