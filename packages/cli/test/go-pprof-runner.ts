import { spawnSync } from 'node:child_process';

export interface GoPprofRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `go tool pprof -symbolize=none ARGS` as the interop tests run it: in `cwd` (pprof's default
 * source path; default `dir`), `TZ=UTC` (profkit prints times in UTC), no symbolization or
 * binary search beyond `dir` (PPROF_BINARY_PATH, PPROF_TMPDIR and HOME point there).
 */
export function goPprofIn(dir: string, cwd = dir): (args: string[]) => GoPprofRun {
  return (args) => {
    const r = spawnSync('go', ['tool', 'pprof', '-symbolize=none', ...args], {
      encoding: 'utf8',
      timeout: 120_000,
      maxBuffer: 256 << 20,
      cwd,
      env: { ...process.env, TZ: 'UTC', PPROF_TMPDIR: dir, PPROF_BINARY_PATH: dir, HOME: dir, GOFLAGS: '' },
    });
    return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
  };
}
