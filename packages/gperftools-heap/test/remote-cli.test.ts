/** End to end through the CLI: `profkit serve` in one process, `profkit fetch` in another. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliBin, haveCli as haveCliBuilt, runCliAsync, type CliRun } from '@profkit/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readLegacy } from '../src/node.js';
import { pprofTestdata } from './helpers.js';
import { fixtureProfile, haveFixtures, stacksByMeaning } from './remote-helpers.js';

const bin = cliBin;
const haveCli = haveCliBuilt('remote CLI tests');

function runCli(args: string[], timeoutMs = 30_000): Promise<CliRun> {
  return runCliAsync(args, { timeoutMs, cwd: process.cwd() });
}

describe.skipIf(!haveCli || !haveFixtures)('profkit serve / profkit fetch', () => {
  const dir = mkdtempSync(join(tmpdir(), 'profkit-remote-cli-'));
  let serve: ChildProcess;
  let base = '';
  let serveErr = '';
  let exited: Promise<number | null>;
  beforeAll(async () => {
    serve = spawn(process.execPath, [bin, 'serve', join(pprofTestdata, 'cppbench.heap'), join(pprofTestdata, 'cppbench.contention'), '--program', '/bin/cppbench'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    serve.stderr!.on('data', (d) => (serveErr += d));
    exited = new Promise((ok) => serve.on('exit', (c) => ok(c)));
    base = await new Promise<string>((ok, fail) => {
      let out = '';
      serve.stdout!.on('data', (d) => {
        out += d;
        const m = /serving on (http:\/\/\S+)/.exec(out);
        if (m) ok(m[1]!);
      });
      serve.on('exit', (c) => fail(new Error(`profkit serve exited with ${c}: ${serveErr}`)));
    });
  });
  afterAll(() => {
    if (serve.exitCode === null) serve.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('fetches the served heap into a file with the same stacks and values', async () => {
    const out = join(dir, 'fetched.heap');
    const r = await runCli(['fetch', `${base}/pprof/heap`, '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('(program /bin/cppbench)');
    const back = readLegacy(new Uint8Array(readFileSync(out))).profile;
    expect(stacksByMeaning(back)).toEqual(stacksByMeaning(fixtureProfile('cppbench.heap')));
  });

  it('serves /debug/pprof/heap as gzipped profile.proto that fetch reads back with the same samples', async () => {
    const out = join(dir, 'fetched.pb.gz');
    const r = await runCli(['fetch', `${base}/debug/pprof/heap`, '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    const bytes = readFileSync(out);
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
    const info = await runCli(['info', '--json', out]);
    expect(info.code, info.stderr).toBe(0);
    expect(JSON.parse(info.stdout).format).toBe('pprof');
    // Back to the legacy text with the CLI, then compare with the fixture.
    const text = join(dir, 'back.heap');
    const conv = await runCli(['convert', out, text]);
    expect(conv.code, conv.stderr).toBe(0);
    const back = readLegacy(new Uint8Array(readFileSync(text))).profile;
    expect(stacksByMeaning(back)).toEqual(stacksByMeaning(fixtureProfile('cppbench.heap')));
  });

  it('exits 5 (network) for a route the server does not have, naming the status', async () => {
    const r = await runCli(['fetch', `${base}/pprof/growth`, '-o', join(dir, 'g.heap')]);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('404');
    expect(r.stderr).toContain('PROFKIT_E_NETWORK');
  });

  it('exits 2 on bad options', async () => {
    const r = await runCli(['fetch', `${base}/pprof/heap`, '--symbolize', 'sideways']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--symbolize must be remote, local or none');
    const b = await runCli(['fetch', `${base}/pprof/heap`, '--binary', './prog']);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('--binary needs --symbolize local');
  });

  it('stops cleanly on SIGINT', async () => {
    // Awaited, not timed: no connection is left open (the fetches were separate processes), so
    // nothing but a broken shutdown can keep it running, and the test's timeout catches that.
    serve.kill('SIGINT');
    const code = await exited;
    expect(code === 0 || code === 130).toBe(true);
    expect(serveErr).toContain('server stopped');
  });
});
