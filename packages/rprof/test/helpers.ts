import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ProfileIndex, resolveStack, type Profile } from '@profkit/core/node';

const here = dirname(fileURLToPath(import.meta.url));
export const fixturesDir = join(here, 'fixtures');
export const rDir = join(here, 'r');
const repoRoot = resolve(here, '../../..');

/** `../shared/fixtures` beside the clone, or `$PROFKIT_SHARED/fixtures`. */
export function sharedDir(): string {
  const base = process.env.PROFKIT_SHARED ?? resolve(repoRoot, '../shared');
  return join(base, 'fixtures');
}

export function sharedFixture(rel: string): string {
  return join(sharedDir(), rel);
}

export function haveShared(rel: string): boolean {
  const p = sharedFixture(rel);
  if (!existsSync(p)) {
    console.warn(`skipping: shared fixture ${p} is absent (set PROFKIT_SHARED or place ../shared/fixtures beside the repository)`);
    return false;
  }
  return true;
}

/** Each sample as resolved frames `name@file:line`, innermost first (meaning, not ids). */
export function stacks(p: Profile): string[][] {
  const index = new ProfileIndex(p);
  const out: string[][] = [];
  for (let i = 0; i < p.samples.value.length; i++) out.push(resolveStack(p, i, index).map((f) => `${f.name}@${f.filename}:${f.line}`));
  return out;
}

/** Sample values per sample type, as strings `type/unit=v`. */
export function values(p: Profile): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < p.samples.value.length; i++) out.push(p.samples['.values'].map((c, k) => `${p.sample_types.type[k]}/${p.sample_types.unit[k]}=${c[i]}`));
  return out;
}

export function* chunked(bytes: Uint8Array, size: number): Generator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, Math.min(bytes.length, i + size));
}

export function extCol(p: Profile, name: string): number[] | undefined {
  const c = p['.extensions'].rprof?.samples?.[name];
  return c ? Array.from(c as ArrayLike<number>, Number) : undefined;
}
