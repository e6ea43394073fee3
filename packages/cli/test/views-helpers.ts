/**
 * Helpers of the view command tests: the repository root (where discovery finds every first-party
 * adapter), the shared fixtures, an in-process `profkit` runner, and `go tool pprof`.
 */

import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { cliBin, haveGoPprof, haveSharedFixtures, repoRoot, sharedFixturePath, sharedFixturesDir } from '@profkit/test-utils';
import { main } from '../src/cli.js';

export { repoRoot };
export const bin = cliBin;
/** `../shared/fixtures` beside the clone, or `$PROFKIT_SHARED/fixtures`. */
export const fixturesDir = sharedFixturesDir();
export const hasFixtures = haveSharedFixtures('views tests');

export const fixture = sharedFixturePath;

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function sink(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(Buffer.from(chunk));
      cb();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** Runs `profkit ARGS` in-process from the repository root. */
export async function profkit(args: string[]): Promise<Run> {
  const out = sink();
  const err = sink();
  const code = await main(args, { stdout: out.stream, stderr: err.stream, cwd: repoRoot });
  return { code, stdout: out.text(), stderr: err.text() };
}

/** Whether `go tool pprof` can run (apt golang-go). */
export const goAvailable = haveGoPprof('views tests');

/** Runs `go tool pprof ARGS`; stdout (stderr holds pprof's symbolization notes). */
export function pprof(args: string[], tmp: string): Run {
  const r = spawnSync('go', ['tool', 'pprof', ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    maxBuffer: 64 << 20,
    env: { ...process.env, PPROF_TMPDIR: tmp, PPROF_BINARY_PATH: tmp, HOME: tmp, GOFLAGS: '' },
  });
  return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

export interface TopRow {
  flat: string;
  flatPct: string;
  sumPct: string;
  cum: string;
  cumPct: string;
  name: string;
}

/** Parses the `-top` table: rows after the `flat flat% sum% cum cum%` header, and the report lines. */
export function parseTop(text: string): { labels: string[]; rows: TopRow[] } {
  const lines = text.split('\n');
  const h = lines.findIndex((l) => /^\s+flat\s+flat%\s+sum%\s+cum\s+cum%$/.test(l));
  if (h < 0) throw new Error(`no -top header in:\n${text}`);
  const rows = lines
    .slice(h + 1)
    .filter((l) => l !== '')
    .map((l) => {
      const m = /^\s*(\S+)\s+(\S+%)\s+(\S+%)\s+(\S+)\s+(\S+%)  (.*)$/.exec(l);
      if (!m) throw new Error(`unparsable -top row: ${JSON.stringify(l)}`);
      return { flat: m[1]!, flatPct: m[2]!, sumPct: m[3]!, cum: m[4]!, cumPct: m[5]!, name: m[6]! };
    });
  const labels = lines.slice(0, h).filter((l) => /^(Type:|Showing|Dropped|Active filters:|   )/.test(l));
  return { labels, rows };
}

/** The report from its "Showing nodes accounting for" line on (the profile labels dropped). */
export function fromShowing(text: string): string {
  const i = text.indexOf('Showing nodes accounting for');
  if (i < 0) throw new Error(`no "Showing nodes" line in:\n${text}`);
  return text.slice(i);
}

const UNITS: Record<string, number> = { ns: 1, us: 1e3, ms: 1e6, s: 1e9, hrs: 3600e9, B: 1, kB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };

/** A pprof-formatted value (`1.28s`, `12.50MB`, `1234`, `0`) in base units. */
export function parseValue(s: string): number {
  const m = /^(-?[\d.]+(?:e[+-]?\d+)?)([a-zA-Z]*)$/.exec(s);
  if (!m) throw new Error(`unparsable value ${s}`);
  const f = m[2] === '' ? 1 : UNITS[m[2]!];
  if (f === undefined) throw new Error(`unknown unit in ${s}`);
  return Number(m[1]) * f;
}
