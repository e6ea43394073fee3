import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, linkSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCodes, isProfkitError, writeFileAtomic } from '../src/node/index.js';

// Crash safety of writeFileAtomic: a child process writes a big file over an existing one and is
// SIGKILLed at several points of the write. Afterwards the target must be the old file or the
// complete new one, never a mix or a prefix, and the only leftover may be the temporary file of
// the write that was in progress (named `.profkit-tmp-<target>-<pid>-…`, see docs/security.md).

const here = dirname(fileURLToPath(import.meta.url));
const coreDist = resolve(here, '../dist/node/index.js');
const CHUNKS = 96;
const CHUNK = 1 << 20;

/** The deterministic content the child writes: chunk i is filled with byte (i * 37 + 11) & 0xff. */
function expectedDigest(): string {
  const h = createHash('sha256');
  for (let i = 0; i < CHUNKS; i++) h.update(Buffer.alloc(CHUNK, (i * 37 + 11) & 0xff));
  return h.digest('hex');
}

const CHILD = `
import { writeFileAtomic } from ${JSON.stringify(coreDist)};
// With -e there is no script path: the arguments start at argv[1].
const [target, chunks, size] = process.argv.slice(1);
if (!target || !(Number(chunks) > 0) || !(Number(size) > 0)) throw new Error('usage: target chunks size');
async function* data() {
  for (let i = 0; i < Number(chunks); i++) {
    if (i === 1) process.stdout.write('writing\\n');
    yield new Uint8Array(Number(size)).fill((i * 37 + 11) & 0xff);
    // Give the parent time to observe and kill mid-write.
    await new Promise((r) => setTimeout(r, 2));
  }
}
await writeFileAtomic(target, data());
process.stdout.write('done\\n');
`;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'profkit-atomic-'));
  dirs.push(d);
  return d;
}

/** Spawns the writer and SIGKILLs it when `when` says so; resolves with how it ended. */
function runWriter(target: string, when: (tmpBytes: number, out: string) => boolean): Promise<{ killed: boolean; code: number | null; pid: number }> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, target, String(CHUNKS), String(CHUNK)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let killed = false;
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const dir = dirname(target);
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error('writer did not finish within 30 s'));
    }, 30_000);
    const poll = setInterval(() => {
      if (killed || !existsSync(dir)) return;
      let tmpBytes = -1;
      for (const f of readdirSync(dir)) if (f.startsWith('.profkit-tmp-')) tmpBytes = Math.max(tmpBytes, statSync(join(dir, f), { throwIfNoEntry: false })?.size ?? -1);
      if (when(tmpBytes, out)) {
        killed = true;
        child.kill('SIGKILL');
      }
    }, 1);
    child.on('error', fail);
    child.on('exit', (code) => {
      clearInterval(poll);
      clearTimeout(guard);
      if (!killed && code !== 0) fail(new Error(`writer failed (${code}): ${err}`));
      else ok({ killed, code, pid: child.pid! });
    });
  });
}

function digest(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

describe.skipIf(!existsSync(coreDist))('writeFileAtomic survives SIGKILL at any point', () => {
  const full = expectedDigest();
  const OLD = 'the old profile\n';
  const points: [string, (tmp: number, out: string) => boolean][] = [
    ['as soon as the temporary file exists', (tmp) => tmp >= 0],
    ['after 1 MiB of the new file', (tmp) => tmp >= CHUNK],
    ['half way', (tmp) => tmp >= (CHUNKS / 2) * CHUNK],
    ['with the last chunk written (fsync/rename window)', (tmp) => tmp >= (CHUNKS - 1) * CHUNK],
    ['after the writer said it is writing', (_tmp, out) => out.includes('writing')],
    ['never (the write completes)', () => false],
  ];
  for (const [label, when] of points) {
    it(`killed ${label}: the target is the old file or the complete new one`, async () => {
      const dir = tempDir();
      const target = join(dir, 'profile.pb');
      writeFileSync(target, OLD);
      const r = await runWriter(target, when);
      const content = readFileSync(target);
      if (content.length === Buffer.byteLength(OLD)) {
        expect(content.toString()).toBe(OLD);
        expect(r.killed).toBe(true);
      } else {
        expect(content.length).toBe(CHUNKS * CHUNK);
        expect(digest(target)).toBe(full);
      }
      const leftovers = readdirSync(dir).filter((f) => f !== 'profile.pb');
      if (!r.killed) expect(leftovers).toEqual([]);
      // At most the temporary file of the killed write, named after the target and the writer's pid.
      expect(leftovers.length).toBeLessThanOrEqual(1);
      for (const f of leftovers) expect(f).toMatch(new RegExp(`^\\.profkit-tmp-profile\\.pb-${r.pid}-`));
    });
  }

  it('a new target is absent or complete after a kill', async () => {
    const dir = tempDir();
    const target = join(dir, 'new.pb');
    const r = await runWriter(target, (tmp) => tmp >= 8 * CHUNK);
    expect(r.killed).toBe(true);
    if (existsSync(target)) expect(digest(target)).toBe(full);
    expect(readdirSync(dir).filter((f) => f !== 'new.pb').every((f) => f.startsWith(`.profkit-tmp-new.pb-${r.pid}-`))).toBe(true);
  });
});

describe('writeFileAtomic never overwrites an input', () => {
  it('refuses the input itself, a hard link to it and a symbolic link to it', async () => {
    const dir = tempDir();
    const input = join(dir, 'in.prof');
    writeFileSync(input, 'input bytes');
    linkSync(input, join(dir, 'hard.prof'));
    symlinkSync(input, join(dir, 'soft.prof'));
    for (const target of [input, join(dir, 'hard.prof'), join(dir, 'soft.prof'), join(dir, '.', 'in.prof')]) {
      const e = await writeFileAtomic(target, new Uint8Array([1, 2, 3]), { inputs: [input] }).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(isProfkitError(e) && e.code).toBe(ErrorCodes.CLOBBER);
    }
    expect(readFileSync(input, 'utf8')).toBe('input bytes');
    expect(readdirSync(dir).sort()).toEqual(['hard.prof', 'in.prof', 'soft.prof']);
  });

  it('a failed write (source throws) leaves the old file and no temporary file', async () => {
    const dir = tempDir();
    const target = join(dir, 'out.prof');
    writeFileSync(target, 'old');
    async function* failing() {
      yield new Uint8Array(1024);
      throw new Error('source failed');
    }
    await expect(writeFileAtomic(target, failing())).rejects.toThrow();
    expect(readFileSync(target, 'utf8')).toBe('old');
    expect(readdirSync(dir)).toEqual(['out.prof']);
  });
});
