/** The built `profkit` binary (`packages/cli/dist/bin.cjs`), spawned as a separate process. */

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './paths.js';

/** `packages/cli/dist/bin.cjs` (the CLI's CommonJS entry; `dist/bin.js` forwards to it). */
export const cliBin = join(repoRoot, 'packages/cli/dist/bin.cjs');

/** Whether the CLI is built; when not, warns (naming `who`) that the CLI tests are skipped. */
export function haveCli(who = 'tests'): boolean {
  if (existsSync(cliBin)) return true;
  console.warn(`${who}: ${cliBin} is not built (npx tsc -b packages/cli); the CLI tests are skipped`);
  return false;
}

export interface CliRunOptions {
  /** Working directory; default the repository root (where discovery finds every first-party adapter through node_modules/@profkit). */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Standard input (none: closed at once). */
  input?: string | Uint8Array;
  /** Killed after this many milliseconds; default 60 s. */
  timeoutMs?: number;
}

export interface CliRun {
  /** Exit code; null when killed by a signal. */
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `profkit ARGS` and waits for it (synchronously). */
export function runCli(args: string[], options: CliRunOptions = {}): CliRun {
  const r = spawnSync(process.execPath, [cliBin, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: options.env ?? process.env,
    input: options.input,
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 60_000,
    maxBuffer: 256 << 20,
  });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** Runs `profkit ARGS` without blocking the event loop (for tests that also serve or listen). */
export function runCliAsync(args: string[], options: CliRunOptions = {}): Promise<CliRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [cliBin, ...args], { cwd: options.cwd ?? repoRoot, env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const t = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', (e) => {
      clearTimeout(t);
      fail(e);
    });
    child.on('close', (code) => {
      clearTimeout(t);
      done({ code, stdout, stderr });
    });
    child.stdin.end(options.input);
  });
}

export interface ModuleLog {
  /** Exit code; null when killed by a signal. */
  status: number | null;
  stderr: string;
  /** Every module URL the process loaded (`file:` and `node:`), in load order. */
  urls: string[];
}

/**
 * Runs `node ARGS` (e.g. `[cliBin, 'top', file]`) under a module-load hook that logs the URL of
 * every module it loads: start-up is module loading, so tests bound what a command loads and the
 * start-up benchmark reports it.
 */
export function runWithModuleLog(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): ModuleLog {
  const dir = mkdtempSync(join(tmpdir(), 'profkit-module-log-'));
  try {
    const log = join(dir, 'modules.log');
    const hooks = join(dir, 'log-hooks.mjs');
    writeFileSync(hooks, "import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) {\n  appendFileSync(process.env.PROFKIT_MODULE_LOG, url + '\\n');\n  return next(url, context);\n}\n");
    const register = join(dir, 'log-register.mjs');
    writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    writeFileSync(log, '');
    const r = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, ...args], {
      cwd: options.cwd ?? repoRoot,
      env: { ...(options.env ?? process.env), PROFKIT_MODULE_LOG: log },
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { status: r.status, stderr: r.stderr ?? '', urls: readFileSync(log, 'utf8').split('\n').filter(Boolean) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
