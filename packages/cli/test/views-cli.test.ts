/**
 * The view commands as a command line: help with examples, --json documents that agree with the
 * text output, folded stacks cross-checked against `top`, shell completion scripts run in real
 * bash/zsh/fish, the progress bar only on a TTY, and one-line usage errors.
 */

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILTIN_COMMANDS } from '../src/commands/index.js';
import { haveTool } from '@profkit/test-utils';
import { bin, fixture, hasFixtures, parseTop, profkit, repoRoot } from './views-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-views-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const VIEW_COMMANDS = ['top', 'tree', 'peek', 'folded', 'diff', 'merge', 'filter', 'flame', 'completion'];
const sampleCpu = fixture('pprof/internal/report/testdata/sample.cpu');

describe('help', () => {
  it.each(VIEW_COMMANDS)('profkit help %s shows usage, options and examples', async (name) => {
    const r = await profkit(['help', name]);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith(`profkit ${name}: `)).toBe(true);
    expect(r.stdout).toContain(`\nprofkit ${name} `);
    const examples = r.stdout.slice(r.stdout.indexOf('Examples:'));
    expect(r.stdout).toContain('Examples:');
    expect(examples.split('\n').filter((l) => l.includes(`profkit ${name}`)).length).toBeGreaterThanOrEqual(2);
    const cmd = BUILTIN_COMMANDS.find((c) => c.name === name)!;
    for (const o of Object.keys(cmd.options ?? {})) expect(r.stdout).toContain(`--${o}`);
  });

  it('profkit --help lists every view command', async () => {
    const r = await profkit(['--help']);
    for (const n of VIEW_COMMANDS) expect(r.stdout).toMatch(new RegExp(`^  ${n}\\s`, 'm'));
  });
});

describe.skipIf(!hasFixtures)('--json documents', () => {
  it('top --json: profkit.top/1 with the rows of the text table', async () => {
    const text = parseTop((await profkit(['top', sampleCpu, '-n', '6'])).stdout);
    const j = JSON.parse((await profkit(['top', sampleCpu, '-n', '6', '--json'])).stdout);
    expect(j.schema).toBe('profkit.top/1');
    expect(j.sampleType).toEqual({ type: 'cpu', unit: 'nanoseconds' });
    expect(j.entries.map((e: { name: string }) => e.name)).toEqual(text.rows.map((r) => r.name.replace(/ \((partial-)?inline\)$/, '')));
    expect(j.entries.map((e: { flatPercent: number }) => e.flatPercent.toFixed(2) + '%')).toEqual(text.rows.map((r) => r.flatPct.trim()));
    expect(j.header).toEqual(expect.arrayContaining(text.labels.filter((l) => l.startsWith('Showing'))));
    const total = BigInt(j.total);
    expect(j.entries.every((e: { cum: string }) => BigInt(e.cum) <= total)).toBe(true);
  });

  it('tree and peek --json: callers and callees whose weights add up to the cum of the entry', async () => {
    for (const args of [['tree', sampleCpu], ['peek', sampleCpu, 'busyLoop']]) {
      const j = JSON.parse((await profkit([...args, '--json'])).stdout);
      expect(j.schema).toBe(`profkit.${args[0]}/1`);
      expect(j.nodes.length).toBeGreaterThan(0);
      for (const n of j.nodes) {
        const cum = BigInt(n.cum);
        const callees = n.callees.reduce((s: bigint, e: { weight: string }) => s + BigInt(e.weight), 0n);
        // what a function spends is its own time plus its calls
        expect(BigInt(n.flat) + callees, n.name).toBe(cum);
        if (n.callers.length) expect(n.callers.reduce((s: bigint, e: { weight: string }) => s + BigInt(e.weight), 0n)).toBe(cum);
      }
    }
    const peek = JSON.parse((await profkit(['peek', sampleCpu, 'busyLoop', '--json'])).stdout);
    expect(peek.nodes.map((n: { name: string }) => n.name)).toEqual(['main.busyLoop']);
    expect(peek.nodes[0].callers.map((e: { name: string }) => e.name)).toEqual(['main.main']);
  });

  it('folded: the values of the stacks ending in a function are its flat value in top; --json has the same stacks', async () => {
    const folded = (await profkit(['folded', sampleCpu])).stdout;
    const leaf = new Map<string, bigint>();
    for (const l of folded.trim().split('\n')) {
      const sp = l.lastIndexOf(' ');
      const name = l.slice(0, sp).split(';').pop()!;
      leaf.set(name, (leaf.get(name) ?? 0n) + BigInt(l.slice(sp + 1)));
    }
    const top = JSON.parse((await profkit(['top', sampleCpu, '--node-fraction', '0', '--json'])).stdout);
    const flat = new Map<string, bigint>(top.entries.filter((e: { flat: string }) => e.flat !== '0').map((e: { name: string; flat: string }) => [e.name, BigInt(e.flat)]));
    expect(leaf).toEqual(flat);
    const j = JSON.parse((await profkit(['folded', sampleCpu, '--json'])).stdout);
    expect(j.schema).toBe('profkit.folded/1');
    expect(j.stacks.map((s: { stack: string[]; value: string }) => `${s.stack.join(';')} ${s.value}`).join('\n') + '\n').toBe(folded);
    const out = join(tmp, 'x.folded');
    expect((await profkit(['folded', sampleCpu, '-o', out])).code).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(folded);
  });

  it('merge/filter/diff --json describe what was written', async () => {
    const m = JSON.parse((await profkit(['merge', sampleCpu, sampleCpu, '-o', join(tmp, 'm.pb.gz'), '--json'])).stdout);
    expect(m).toMatchObject({ schema: 'profkit.merge/1', to: 'pprof', inputs: [sampleCpu, sampleCpu] });
    const f = JSON.parse((await profkit(['filter', sampleCpu, '-o', join(tmp, 'f.pb.gz'), '--focus', 'evacuate', '--json'])).stdout);
    expect(f.schema).toBe('profkit.filter/1');
    expect(f.samples.after).toBeLessThan(f.samples.before);
    const d = JSON.parse((await profkit(['diff', sampleCpu, join(tmp, 'f.pb.gz'), '--json'])).stdout);
    expect(d.schema).toBe('profkit.diff/1');
    // NEW holds only the evacuate samples, so everything else shrank
    expect(d.entries.find((e: { name: string }) => e.name === 'runtime.mapiternext').flat.startsWith('-')).toBe(true);
  });
});

describe.skipIf(!hasFixtures)('errors are one line with exit 2', () => {
  it.each([
    [['top', sampleCpu, '--sample-type', 'nope'], '--sample-type nope: no such sample type (the profile has samples/count, cpu/nanoseconds)'],
    [['top', sampleCpu, '--focus', '('], 'invalid regular expression for focus'],
    [['top', sampleCpu, '-n', 'ten'], '-n'],
    [['top', sampleCpu, '--by', 'module'], '--by module: expected function, filefunctions, file, line or address'],
    [['filter', sampleCpu], 'filter needs -o OUT'],
    [['merge', sampleCpu], 'merge needs -o OUT'],
    [['completion', 'tcsh'], 'completion tcsh: unknown shell'],
  ])('%j', async (args, message) => {
    const r = await profkit(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(message);
    expect(r.stderr.trimEnd().endsWith('[PROFKIT_E_USAGE]')).toBe(true);
  });

  it('a broken input exits 1 and names the file', async () => {
    const bad = join(tmp, 'bad.pb.gz');
    writeFileSync(bad, Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3]));
    const r = await profkit(['top', bad, '--from', 'pprof']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(bad);
  });

  it('merge refuses to overwrite an input', async () => {
    const copy = join(tmp, 'copy.pb.gz');
    writeFileSync(copy, readFileSync(sampleCpu));
    const r = await profkit(['merge', copy, sampleCpu, '-o', copy]);
    expect(r.code).toBe(3);
    expect(readFileSync(copy)).toEqual(readFileSync(sampleCpu));
  });
});

describe('shell completion', () => {
  it('bash: completes commands, options, --by values and files', async () => {
    const script = join(tmp, 'profkit.bash');
    const r = await profkit(['completion', 'bash']);
    expect(r.code).toBe(0);
    writeFileSync(script, r.stdout);
    const complete = (words: string[]) => {
      const sh = `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _profkit; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const p = spawnSync('bash', ['-c', sh], { encoding: 'utf8', cwd: tmp });
      expect(p.stderr).toBe('');
      return p.stdout.trim().split('\n').filter(Boolean);
    };
    expect(complete(['profkit', 'fl'])).toEqual(['flame']);
    expect(complete(['profkit', 't'])).toEqual(expect.arrayContaining(['top', 'tree']));
    expect(complete(['profkit', 'top', '--sa'])).toEqual(['--sample-type']);
    expect(complete(['profkit', 'flame', 'x', '--form'])).toEqual(['--format']);
    expect(complete(['profkit', 'top', 'x', '--by', ''])).toEqual(['function', 'filefunctions', 'file', 'line', 'address']);
    expect(complete(['profkit', 'convert', 'x', '--to', 'ppr'])).toEqual(['pprof']);
    expect(complete(['profkit', 'help', 'pe'])).toEqual(['peek']);
    expect(complete(['profkit', 'top', 'profkit.ba'])).toEqual(['profkit.bash']);
  });

  const zsh = haveTool('zsh', 'zsh', 'views-cli');
  it.skipIf(!zsh)('zsh: the script parses and registers _profkit (skipped without zsh: apt-get install zsh)', async () => {
    const script = join(tmp, '_profkit');
    writeFileSync(script, (await profkit(['completion', 'zsh'])).stdout);
    expect(spawnSync('zsh', ['-n', script], { encoding: 'utf8' }).stderr).toBe('');
    const p = spawnSync('zsh', ['-f', '-c', `autoload -U compinit && compinit -u -D && source ${script} && print -r -- \${_comps[profkit]}`], { encoding: 'utf8', cwd: tmp, env: { ...process.env, HOME: tmp } });
    expect(p.stdout.trim()).toBe('_profkit');
  });

  const fish = haveTool('fish', 'fish', 'views-cli');
  it.skipIf(!fish)('fish: complete -C gives commands, options and values (skipped without fish: apt-get install fish)', async () => {
    const script = join(tmp, 'profkit.fish');
    writeFileSync(script, (await profkit(['completion', 'fish'])).stdout);
    const complete = (line: string) => {
      const p = spawnSync('fish', ['--no-config', '-c', `source ${script}; complete -C ${JSON.stringify(line)}`], { encoding: 'utf8', cwd: tmp, env: { ...process.env, HOME: tmp } });
      expect(p.stderr).toBe('');
      return p.stdout.split('\n').filter(Boolean).map((l) => l.split('\t')[0]);
    };
    expect(complete('profkit fla')).toEqual(['flame']);
    expect(complete('profkit top --sample-')).toEqual(['--sample-type']);
    expect(complete('profkit top x --by ')).toEqual(expect.arrayContaining(['function', 'file', 'line']));
  });
});

function spawnCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res, rej) => {
    const c = spawn(process.execPath, [bin, ...args], { cwd: repoRoot });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d));
    c.stderr.on('data', (d: Buffer) => (stderr += d));
    c.on('error', rej);
    c.on('close', (code) => res({ code, stdout, stderr }));
  });
}

const hasScript = spawnSync('script', ['--version']).status === 0;
describe.skipIf(!hasFixtures)('progress bar', () => {
  const large = fixture('pprof/internal/proftest/testdata/large.cpu');
  it('is never drawn into a pipe', async () => {
    const r = await spawnCli(['top', large, '-n', '3']);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('\r');
    expect(r.stderr).not.toContain('reading');
  });

  it.skipIf(!hasScript)('is drawn on a TTY (util-linux script), and --quiet / --json silence it', () => {
    const tty = (extra: string) =>
      spawnSync('script', ['-qec', `${process.execPath} ${bin} top ${large} -n 3 ${extra} 2>&1 >/dev/null`, '/dev/null'], { encoding: 'utf8', cwd: repoRoot, timeout: 120_000 }).stdout;
    expect(tty('')).toMatch(/\rreading .*large\.cpu/);
    expect(tty('--quiet')).not.toContain('reading');
    expect(tty('--json')).not.toContain('reading');
  });
});
