#!/usr/bin/env node
/**
 * `npm run fuzz -- --target pprof --execs 1000000 [--seconds N] [--seed N] [--timeout MS]
 * [--crashes DIR] [--no-special] [--no-coverage] [--json]`; `--target all` runs every target in turn.
 * Exit code 1 when a crasher was found (saved under --crashes, default $TMPDIR/profkit-fuzz-crashers).
 */
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fuzz, type FuzzStats } from './engine.js';
import { TARGET_NAMES, type TargetName } from './targets.js';

const { values } = parseArgs({
  options: {
    target: { type: 'string', default: 'all' },
    execs: { type: 'string', default: '100000' },
    seconds: { type: 'string' },
    seed: { type: 'string', default: String(Date.now() % 1_000_000) },
    timeout: { type: 'string', default: '10000' },
    crashes: { type: 'string', default: join(tmpdir(), 'profkit-fuzz-crashers') },
    'no-special': { type: 'boolean', default: false },
    'no-coverage': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  process.stdout.write(`usage: profkit-fuzz --target (${TARGET_NAMES.join('|')}|views|all) --execs N [--seconds S] [--seed N] [--timeout MS] [--crashes DIR] [--no-special] [--no-coverage] [--json]\n`);
  process.exit(0);
}

const targets: TargetName[] = values.target === 'all' ? [...TARGET_NAMES] : (values.target!.split(',') as TargetName[]);
for (const t of targets) {
  if (!(TARGET_NAMES as readonly string[]).includes(t) && t !== 'harness-check' && t !== 'views') {
    process.stderr.write(`unknown target ${t}; one of ${TARGET_NAMES.join(', ')}, views, all\n`);
    process.exit(2);
  }
}

const line = (s: FuzzStats) =>
  `${s.target}: ${s.execs} execs in ${s.seconds.toFixed(1)} s (${Math.round(s.execsPerSecond)}/s), corpus ${s.corpus}, features ${s.features}, blocks ${s.blocks}, crashes ${s.crashes.length}, max growth ${(s.maxGrowth / 2 ** 20).toFixed(1)} MiB, peak RSS ${(s.peakRss / 2 ** 20).toFixed(0)} MiB, slowest ${s.slowestMs.toFixed(0)} ms`;

let crashes = 0;
const all: FuzzStats[] = [];
for (const target of targets) {
  const stats = await fuzz({
    target,
    execs: Number(values.execs),
    maxSeconds: values.seconds === undefined ? undefined : Number(values.seconds),
    seed: Number(values.seed),
    timeoutMs: Number(values.timeout),
    crashDir: resolve(values.crashes!),
    special: !values['no-special'],
    coverage: !values['no-coverage'],
    onProgress: values.json ? undefined : (s) => process.stderr.write(`\r${line(s)}   `),
  });
  crashes += stats.crashes.length;
  all.push(stats);
  if (!values.json) {
    process.stderr.write('\n');
    process.stdout.write(`${line(stats)}\n  outcomes: ${JSON.stringify(stats.outcomes)}\n`);
    for (const c of stats.crashes) process.stdout.write(`  CRASH ${c.kind} ${c.feature} (${c.input}, ${c.size} bytes): ${c.message.slice(0, 200)}${c.file ? ` -> ${c.file}` : ''}\n`);
  }
}
if (values.json) process.stdout.write(JSON.stringify(all, (_k, v) => (typeof v === 'bigint' ? String(v) : v), 2) + '\n');
process.exit(crashes > 0 ? 1 : 0);
