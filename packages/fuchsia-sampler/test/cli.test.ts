import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliBin, haveCli, runCli, runCliAsync } from '@profkit/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { createRegistry, locationRows, sampleRows, type Profile } from '@profkit/core/node';
import pprofAdapter from '@profkit/pprof';
import fuchsiaSampler, { callsToRecording, replayRecording, type SamplerCall } from '../src/node.js';

const bin = cliBin;
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const registry = createRegistry([pprofAdapter, fuchsiaSampler]);

function rows(p: Profile, onlyLive = false): string[] {
  const addr = new Map<number, bigint>();
  for (const l of locationRows(p)) addr.set(l.locationId, l.address);
  return [...sampleRows(p)]
    .filter((s) => !onlyLive || s.values[0]! > 0n)
    .map((s) => `${s.locationIds.map((id) => addr.get(id)!.toString(16)).join(',')}=${(onlyLive ? s.values.slice(0, 2) : s.values).join(',')}`)
    .sort();
}

describe.skipIf(!haveCli('fuchsia-sampler CLI tests'))('through the spawned CLI (packages/cli/dist/bin.js)', () => {
  // A private config so other adapters being built in the workspace cannot interfere.
  const dir = mkdtempSync(join(tmpdir(), 'fuchsia-sampler-cli-'));
  writeFileSync(join(dir, 'profkit.config.json'), JSON.stringify({ adapters: ['@profkit/pprof', '@profkit/fuchsia-sampler'] }));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const run = (...args: string[]) => runCli(args, { cwd: dir });

  it('convert: recording → pprof → JSONL recording keeps the live heap', async () => {
    const a = run('convert', fixture('upstream-example.fsrec'), 'out.pb.gz');
    expect(a.code, a.stderr).toBe(0);
    const b = run('convert', 'out.pb.gz', 'back.fsrec.jsonl');
    expect(b.code, b.stderr).toBe(0);
    const original = (await registry.read(fixture('upstream-example.fsrec'))).profile;
    const pprof = (await registry.read(join(dir, 'out.pb.gz'))).profile;
    expect(rows(pprof)).toEqual(rows(original));
    const back = (await registry.read(join(dir, 'back.fsrec.jsonl'))).profile;
    expect(rows(back, true)).toEqual(rows(original, true));
    expect(back['.extensions']['fuchsia-sampler']!.facts!.process_name).toBe('test process');
  });

  it('errors: one line with the PROFKIT_E_ code, and the documented exit codes (2 usage, 3 I/O, 5 network, 1 invalid)', () => {
    const rec = join(dir, 'codes.fsrec');
    writeFileSync(rec, callsToRecording([{ method: 'SetProcessInfo', processName: 'codes' }]));
    const cases: [string[], number, RegExp][] = [
      [['fuchsia-sampler', 'serve', '--listen', 'nonsense', '--out', join(dir, 'o')], 2, /^profkit: fuchsia-sampler serve: address "nonsense" is not HOST:PORT or unix:PATH \[PROFKIT_E_USAGE\]\n$/],
      [['fuchsia-sampler', 'serve', '--out', join(dir, 'o')], 2, /needs --listen ADDR and --out DIR \[PROFKIT_E_USAGE\]\n$/],
      [['fuchsia-sampler', 'replay', rec, '--to', '127.0.0.1:1'], 5, /127\.0\.0\.1:1.* \[PROFKIT_E_NETWORK\]\n$/],
      [['fuchsia-sampler', 'replay', rec, '--to', '127.0.0.1:1', '--generation', '7'], 2, /--generation must be 1, 2 or 3 \[PROFKIT_E_USAGE\]\n$/],
      [['fuchsia-sampler', 'profiles', join(dir, 'missing.fsrec'), '--out', join(dir, 'o')], 3, /no such file \[PROFKIT_E_IO\]\n$/],
      [['fuchsia-sampler', 'profiles', fixture('upstream-example.fsrec.jsonl'), '--out', join(dir, 'o'), '--partial-threshold=-1'], 2, /--partial-threshold must be a number >= 0, got "-1" \[PROFKIT_E_USAGE\]\n$/],
    ];
    for (const [args, code, line] of cases) {
      const r = run(...args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(code);
      expect(r.stderr).toMatch(line);
      expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
      expect(r.stdout).toBe('');
    }
    const bad = join(dir, 'bad.fsrec');
    writeFileSync(bad, Buffer.concat([readFileSync(fixture('upstream-example.fsrec')).subarray(0, 16), Buffer.from([7, 0, 0, 0, 0, 0, 0, 0])]));
    const r = run('fuchsia-sampler', 'profiles', bad, '--out', join(dir, 'o'));
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/\[PROFKIT_E_FUCHSIA_RECORDING\]\n$/);
  });

  it('--json documents through the CLI', () => {
    const r = run('fuchsia-sampler', 'profiles', fixture('upstream-example.fsrec'), '--out', join(dir, 'json-out'), '--json');
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.schema).toBe('profkit.fuchsia-sampler.profiles/1');
    expect(doc.files).toEqual(readdirSync(join(dir, 'json-out')).map((f) => join(dir, 'json-out', f)));
  });

  it('issue 15: replay exits 5 when the collector refuses it; --idle-timeout frees the slot an idle connection held', async () => {
    const out = join(dir, 'idle-profiles');
    const server = spawn(process.execPath, [bin, 'fuchsia-sampler', 'serve', '--listen', '127.0.0.1:0', '--out', out, '--max-clients', '1', '--idle-timeout', '3', '--timeout', '30'], { cwd: dir });
    let stdout = '';
    let stderr = '';
    server.stdout.on('data', (d) => (stdout += d));
    server.stderr.on('data', (d) => (stderr += d));
    try {
      for (let i = 0; i < 6000 && !/listening \S+/.test(stdout); i++) await new Promise((r) => setTimeout(r, 20));
      const addr = /listening (\S+)/.exec(stdout)?.[1];
      expect(addr, stderr).toBeTruthy();
      const rec = join(dir, 'idle.fsrec');
      writeFileSync(rec, callsToRecording([{ method: 'SetProcessInfo', processName: 'after_idle' }]));
      // A connection takes the only slot. It sends a record every 200 ms until the replay was
      // refused, so that it is not idle however long a loaded machine takes to start the replay
      // (a header alone, idle from the start, left the replay 3 s: too little beside CPU burners).
      const { connect } = await import('node:net');
      const holder = connect({ host: '127.0.0.1', port: Number(addr!.split(':')[1]) });
      holder.on('error', () => {});
      const recording = readFileSync(rec);
      holder.write(recording);
      const keepBusy = setInterval(() => holder.write(recording.subarray(16)), 200);
      const waitFor = async (re: RegExp) => {
        // 120 s: a bound against hangs only.
        for (let i = 0; i < 6000 && !re.test(stderr); i++) await new Promise((r) => setTimeout(r, 20));
        expect(stderr).toMatch(re);
      };
      await waitFor(/client#1 connected/);
      let refused: Awaited<ReturnType<typeof runCliAsync>>;
      try {
        refused = await runCliAsync(['fuchsia-sampler', 'replay', rec, '--to', addr!], { cwd: dir });
      } finally {
        clearInterval(keepBusy);
      }
      // The busy connection holds the slot: the replay is refused (exit 5, no "sent"). From now on
      // it is idle, and --idle-timeout 3 frees the slot.
      expect(stderr).not.toMatch(/client#1: idle/);
      expect(refused.code, refused.stderr).toBe(5);
      expect(refused.stderr).toMatch(/^profkit: 127\.0\.0\.1:\d+ refused the connection: 1 clients connected .*\[PROFKIT_E_NETWORK\]\n$/);
      expect(refused.stdout).toBe('');
      await waitFor(/client#1: idle for 3000 ms/);
      holder.destroy();
      const served = await runCliAsync(['fuchsia-sampler', 'replay', rec, '--to', addr!], { cwd: dir });
      expect(served.code, served.stderr).toBe(0);
      expect(served.stdout).toBe(`sent 1 records to ${addr}\n`);
      expect(readdirSync(out)).toContain('after_idle_final_0.pb.gz');
    } finally {
      server.kill('SIGKILL');
    }
  }, 300_000); // the waits inside are bounded at 120 s each, against hangs only

  it('serve + replay as processes; SIGTERM writes the final profile of a connected client', async () => {
    const out = join(dir, 'profiles');
    const server = spawn(process.execPath, [bin, 'fuchsia-sampler', 'serve', '--listen', '127.0.0.1:0', '--out', out, '--timeout', '30', '--raw'], { cwd: dir });
    let stdout = '';
    let stderr = '';
    server.stdout.on('data', (d) => (stdout += d));
    server.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => server.on('exit', (code) => r(code)));
    try {
      for (let i = 0; i < 6000 && !/listening \S+/.test(stdout); i++) await new Promise((r) => setTimeout(r, 20));
      const addr = /listening (\S+)/.exec(stdout)?.[1];
      expect(addr, stderr).toBeTruthy();
      const calls: SamplerCall[] = [{ method: 'SetProcessInfo', processName: 'spawned' }];
      for (let i = 0; i < 30; i++) calls.push({ method: 'RecordAllocation', address: BigInt(i + 1), stackTrace: { stackFrames: BigUint64Array.of(BigInt(0x100 + (i % 3))) }, size: BigInt(i) });
      writeFileSync(join(dir, 'w.fsrec'), callsToRecording(calls));
      const rep = run('fuchsia-sampler', 'replay', join(dir, 'w.fsrec'), '--to', addr!);
      expect(rep.code, rep.stderr).toBe(0);
      for (let i = 0; i < 6000 && !existsSync(join(out, 'spawned_final_0.pb.gz')); i++) await new Promise((r) => setTimeout(r, 20));
      // A client that stays connected: its profile is written when the collector is terminated.
      const { connectSampler } = await import('../src/node.js');
      const c = await connectSampler(addr!);
      await c.send({ method: 'SetProcessInfo', processName: 'lingering' });
      await c.send({ method: 'RecordAllocation', address: 7n, stackTrace: { stackFrames: BigUint64Array.of(0x999n) }, size: 9n });
      await c.flush();
      await new Promise((r) => setTimeout(r, 1000));
      server.kill('SIGTERM');
      const code = await exited;
      c.destroy();
      // The CLI reports the interruption with its own exit code (130 today); the command itself
      // finished cleanly: it logged the stop and wrote the final profiles before exiting.
      expect([0, 130, 143], stderr).toContain(code);
      expect(stderr).toMatch(/stopping: signal/);
      expect(readdirSync(out).sort()).toEqual(['lingering_final_0.pb.gz', 'spawned_final_0.pb.gz']);
      const got = (await registry.read(join(out, 'spawned_final_0.pb.gz'))).profile;
      expect(rows(got)).toEqual(rows(replayRecording(readFileSync(join(dir, 'w.fsrec')), { unsample: false }).profiles[0]!.profile));
      const lingering = (await registry.read(join(out, 'lingering_final_0.pb.gz'))).profile;
      expect(rows(lingering)).toEqual(['999=1,9,1,9,0,0']);
    } finally {
      if (server.exitCode === null) server.kill('SIGKILL');
    }
  }, 300_000); // the waits inside are bounded at 120 s each, against hangs only
});
