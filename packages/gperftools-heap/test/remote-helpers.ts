import { haveTool } from '@profkit/test-utils';
import { ProfileIndex, resolveStack, type Profile, type Registry } from '@profkit/core/node';
import { buildRegistry } from '@profkit/core/node';
import { readLegacy } from '../src/node.js';
import { haveShared, repoRoot, sharedFixture } from './helpers.js';

/** Reads a shared legacy fixture. */
export function fixtureProfile(name: string): Profile {
  return readLegacy(sharedFixture(`pprof/profile/testdata/${name}`), { fileName: name }).profile;
}

export const haveFixtures = haveShared;

/**
 * The meaning of a profile's samples: for each stack (frames as `name@address`, innermost
 * first) the summed values per sample type (samples with equal stacks summed, since formats
 * differ in whether they keep them apart).
 */
export function stacksByMeaning(p: Profile): Map<string, string> {
  const index = new ProfileIndex(p);
  const sums = new Map<string, bigint[]>();
  for (let i = 0; i < p.samples.value.length; i++) {
    const key = resolveStack(p, i, index)
      .map((f) => `${f.symbolized ? f.name : ''}@${f.address.toString(16)}`)
      .join(' ');
    const v = p.samples['.values'].map((c) => c[i]!);
    const s = sums.get(key);
    if (s) v.forEach((x, k) => (s[k]! += x));
    else sums.set(key, v);
  }
  const out = new Map<string, string>();
  for (const [k, v] of sums) out.set(k, v.join(','));
  return out;
}

/** The registry of the repository (all first-party adapters, found by discovery), or undefined when it cannot be built. */
export async function repoRegistry(): Promise<Registry | undefined> {
  try {
    const r = await buildRegistry({ cwd: repoRoot });
    return r.registry.get('pprof') ? r.registry : undefined;
  } catch (e) {
    console.warn(`remote tests: the repository registry could not be built (${(e as Error).message}); pprof-dependent tests are skipped`);
    return undefined;
  }
}

/** `go` on PATH (the Debian package golang-go). */
export const haveGo = haveTool('go', 'golang-go', 'remote tests');
