import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, createReadStream, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCodes, ProfkitError, isProfkitError, writeFileAtomic } from '../src/node/index.js';

// What writeFileAtomic does with targets that are not plain files (issue 15, item 7): the
// temp-file-and-rename step must not turn a FIFO, a device node or a symbolic link into a
// regular file, must refuse directories and sockets, and must keep an existing file's mode.

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'profkit-targets-'));
  dirs.push(d);
  return d;
}

async function rejection(p: Promise<unknown>): Promise<ProfkitError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  if (!isProfkitError(e)) throw new Error(`expected a ProfkitError, got ${String(e)}`);
  return e;
}

const coreDist = resolve(dirname(fileURLToPath(import.meta.url)), '../dist/node/index.js');
const isRoot = process.getuid?.() === 0;

/** Everything a reader of the FIFO `path` gets until the writer closes it. */
function readAll(path: string): Promise<Buffer> {
  return new Promise((ok, fail) => {
    const chunks: Buffer[] = [];
    const s = createReadStream(path);
    s.on('data', (d) => chunks.push(d as Buffer));
    s.on('end', () => ok(Buffer.concat(chunks)));
    s.on('error', fail);
  });
}
const haveMkfifo = spawnSync('mkfifo', ['--version']).status === 0;

/**
 * Character devices to write to, each `[label, path, major/minor]`: as root, fresh nodes made with
 * mknod in a temporary directory (the real /dev/null must never be at risk of being replaced by a
 * regression); otherwise the real /dev/null and /dev/full, which a non-root process cannot replace.
 */
function deviceNodes(): { null?: string; full?: string; why?: string } {
  if (!isRoot) return { null: '/dev/null', full: '/dev/full' };
  const dir = tempDir();
  const made = (name: string, minor: number) => spawnSync('mknod', [join(dir, name), 'c', '1', String(minor)]).status === 0;
  if (made('null', 3) && made('full', 7)) return { null: join(dir, 'null'), full: join(dir, 'full') };
  return { why: 'running as root but mknod is not allowed here (container without CAP_MKNOD), and writing to the real /dev nodes as root would risk replacing them' };
}
const devices = deviceNodes();
if (devices.why) console.warn(`write-targets: character device tests skipped: ${devices.why}`);

describe('writeFileAtomic on special files', () => {
  it.skipIf(!haveMkfifo)('writes through a FIFO to its reader and leaves the FIFO in place', async () => {
    const dir = tempDir();
    const fifo = join(dir, 'out.fifo');
    execFileSync('mkfifo', [fifo]);
    const data = new Uint8Array(3 << 20).map((_, i) => (i * 7) & 0xff);
    const reader = readAll(fifo);
    await writeFileAtomic(fifo, data);
    expect((await reader).equals(Buffer.from(data))).toBe(true);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(readdirSync(dir)).toEqual(['out.fifo']);
  });

  it.skipIf(devices.null === undefined)('writes into a character device (/dev/null) without replacing the node', async () => {
    const dev = devices.null!;
    const before = lstatSync(dev);
    await writeFileAtomic(dev, new Uint8Array(1 << 20));
    const after = lstatSync(dev);
    expect(after.isCharacterDevice()).toBe(true);
    expect(after.rdev).toBe(before.rdev);
    expect(after.ino).toBe(before.ino);
  });

  it.skipIf(devices.full === undefined)('a full device (/dev/full) is a clean PROFKIT_E_IO error, and stays a device', async () => {
    const dev = devices.full!;
    const before = lstatSync(dev);
    async function* chunks() {
      for (let i = 0; i < 4; i++) yield new Uint8Array(1 << 16);
    }
    for (const data of [new Uint8Array(1 << 20), chunks()]) {
      const e = await rejection(writeFileAtomic(dev, data));
      expect(e.code).toBe(ErrorCodes.IO);
      expect(e.detail.errno).toBe('ENOSPC');
      expect(e.detail.file).toBe(dev);
    }
    const after = lstatSync(dev);
    expect(after.isCharacterDevice()).toBe(true);
    expect(after.ino).toBe(before.ino);
  });

  it.skipIf(!haveMkfifo)('a symbolic link to a FIFO: written through, the link and the FIFO stay', async () => {
    const dir = tempDir();
    const fifo = join(dir, 'real.fifo');
    execFileSync('mkfifo', [fifo]);
    symlinkSync('real.fifo', join(dir, 'link'));
    const reader = readAll(fifo);
    await writeFileAtomic(join(dir, 'link'), new TextEncoder().encode('through the link'));
    expect((await reader).toString()).toBe('through the link');
    expect(lstatSync(join(dir, 'link')).isSymbolicLink()).toBe(true);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });

  it.skipIf(!existsSync(coreDist) || !existsSync('/proc/self/fd/1'))('a link to /proc/self/fd/1 (what /dev/stdout is) on a pipe is written through, not replaced', () => {
    // Our own link rather than /dev/stdout: a regression must not be able to replace a /dev node.
    const dir = tempDir();
    const link = join(dir, 'stdout');
    symlinkSync('/proc/self/fd/1', link);
    const child = `import { writeFileAtomic } from ${JSON.stringify(coreDist)};
await writeFileAtomic(${JSON.stringify(link)}, new TextEncoder().encode('to the pipe\\n'));`;
    // Node's own child stdio are sockets; \`| cat\` makes the child's stdout a real pipe.
    const r = spawnSync('sh', ['-c', '"$NODE" --input-type=module -e "$CHILD" | cat'], { encoding: 'utf8', env: { ...process.env, NODE: process.execPath, CHILD: child } });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('to the pipe\n');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readdirSync(dir)).toEqual(['stdout']);
  });

  it('follows a symbolic link: the file it names is replaced, the link stays', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'data'));
    const real = join(dir, 'data', 'real.pb');
    writeFileSync(real, 'old', { mode: 0o600 });
    symlinkSync('data/real.pb', join(dir, 'link.pb'));
    symlinkSync('link.pb', join(dir, 'link2.pb'));
    await writeFileAtomic(join(dir, 'link2.pb'), new TextEncoder().encode('new'));
    expect(lstatSync(join(dir, 'link.pb')).isSymbolicLink()).toBe(true);
    expect(lstatSync(join(dir, 'link2.pb')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(dir, 'link.pb'))).toBe('data/real.pb');
    expect(readFileSync(real, 'utf8')).toBe('new');
    expect(statSync(real).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).sort()).toEqual(['data', 'link.pb', 'link2.pb']);
    expect(readdirSync(join(dir, 'data'))).toEqual(['real.pb']);
  });

  it('follows a dangling symbolic link by creating the file it names', async () => {
    const dir = tempDir();
    symlinkSync('made.pb', join(dir, 'link.pb'));
    await writeFileAtomic(join(dir, 'link.pb'), new TextEncoder().encode('new'));
    expect(lstatSync(join(dir, 'link.pb')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, 'made.pb'), 'utf8')).toBe('new');
  });

  it('refuses a symbolic link loop with a clear error', async () => {
    const dir = tempDir();
    symlinkSync('b', join(dir, 'a'));
    symlinkSync('a', join(dir, 'b'));
    const e = await rejection(writeFileAtomic(join(dir, 'a'), new Uint8Array(1)));
    expect(e.code).toBe(ErrorCodes.IO);
    expect(e.message).toMatch(/symbolic links/);
  });

  it('refuses a directory and a socket, leaving them as they were', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'sub'));
    const e = await rejection(writeFileAtomic(join(dir, 'sub'), new Uint8Array(1)));
    expect(e.code).toBe(ErrorCodes.IO);
    expect(e.message).toContain('is a directory');
    expect(lstatSync(join(dir, 'sub')).isDirectory()).toBe(true);

    const sock = join(dir, 's.sock');
    const server = createServer();
    await new Promise<void>((ok) => server.listen(sock, ok));
    try {
      const s = await rejection(writeFileAtomic(sock, new Uint8Array(1)));
      expect(s.code).toBe(ErrorCodes.IO);
      expect(s.message).toContain('is a socket');
      expect(lstatSync(sock).isSocket()).toBe(true);
    } finally {
      await new Promise((ok) => server.close(ok));
    }
    expect(readdirSync(dir).filter((f) => f.startsWith('.profkit-tmp'))).toEqual([]);
  });
});

describe('writeFileAtomic keeps permissions', () => {
  it('an existing file keeps its mode (0600 stays 0600, 0640 stays 0640)', async () => {
    const dir = tempDir();
    for (const mode of [0o600, 0o640, 0o755]) {
      const f = join(dir, `m${mode.toString(8)}.pb`);
      writeFileSync(f, 'old');
      execFileSync('chmod', [mode.toString(8), f]);
      await writeFileAtomic(f, new TextEncoder().encode('new'));
      expect(readFileSync(f, 'utf8')).toBe('new');
      expect((statSync(f).mode & 0o777).toString(8)).toBe(mode.toString(8));
    }
  });

  it('a new file gets 0644 minus the umask', async () => {
    const dir = tempDir();
    const f = join(dir, 'new.pb');
    await writeFileAtomic(f, new TextEncoder().encode('new'));
    const umask = process.umask();
    expect((statSync(f).mode & 0o777).toString(8)).toBe((0o644 & ~umask).toString(8));
  });

  it.skipIf(!isRoot)('as root, an existing file keeps its owner and group', async () => {
    const dir = tempDir();
    const f = join(dir, 'owned.pb');
    writeFileSync(f, 'old');
    chownSync(f, 4321, 8765);
    await writeFileAtomic(f, new TextEncoder().encode('new'));
    expect(readFileSync(f, 'utf8')).toBe('new');
    expect([statSync(f).uid, statSync(f).gid]).toEqual([4321, 8765]);
  });
});

describe('writeFileAtomic with an AbortSignal', () => {
  it('an abort during the write leaves the old file, no temporary file, and rejects with the reason', async () => {
    const dir = tempDir();
    const f = join(dir, 'out.pb');
    writeFileSync(f, 'old');
    const controller = new AbortController();
    const reason = new ProfkitError('PROFKIT_E_ABORTED', 'interrupted by SIGINT');
    async function* chunks() {
      for (let i = 0; i < 8; i++) {
        if (i === 3) controller.abort(reason);
        yield new Uint8Array(1 << 16).fill(i);
      }
    }
    const e = await rejection(writeFileAtomic(f, chunks(), { signal: controller.signal }));
    expect(e).toBe(reason);
    expect(readFileSync(f, 'utf8')).toBe('old');
    expect(readdirSync(dir)).toEqual(['out.pb']);
  });

  it('an abort after the last chunk, before the rename, still leaves the old file', async () => {
    const dir = tempDir();
    const f = join(dir, 'out.pb');
    writeFileSync(f, 'old');
    const controller = new AbortController();
    async function* chunks() {
      yield new Uint8Array(1 << 16);
      // Aborted while the consumer asks for more: every byte is written when it notices.
      controller.abort(new ProfkitError('PROFKIT_E_ABORTED', 'interrupted by SIGTERM'));
    }
    const e = await rejection(writeFileAtomic(f, chunks(), { signal: controller.signal }));
    expect(e.code).toBe('PROFKIT_E_ABORTED');
    expect(readFileSync(f, 'utf8')).toBe('old');
    expect(readdirSync(dir)).toEqual(['out.pb']);
  });
});
