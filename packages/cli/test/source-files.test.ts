/**
 * `sourceFileReader` finds source files as pprof's `openSourceFile` does: the cases of google/pprof's
 * TestOpenSourceFile (internal/report/source_test.go), each file holding its own path so the test
 * sees which one was read; and lines split as Go's bufio.Scanner splits them.
 */

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_SOURCE_FILE_LINES } from '@profkit/core/node';
import { sourceFileReader } from '../src/commands/source-files.js';

const dir = mkdtempSync(join(tmpdir(), 'profkit-source-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('sourceFileReader (pprof openSourceFile cases)', () => {
  const cases: { desc: string; searchPath: string; trimPath?: string; fs: string[]; path: string; want?: string }[] = [
    { desc: 'exact absolute path is found', searchPath: '', fs: ['foo/bar.cc'], path: '$dir/foo/bar.cc', want: '$dir/foo/bar.cc' },
    { desc: 'exact relative path is found', searchPath: '$dir', fs: ['foo/bar.cc'], path: 'foo/bar.cc', want: '$dir/foo/bar.cc' },
    { desc: 'multiple search path', searchPath: 'some/path:$dir', fs: ['foo/bar.cc'], path: 'foo/bar.cc', want: '$dir/foo/bar.cc' },
    { desc: 'relative path is found in parent dir', searchPath: '$dir/foo/bar', fs: ['bar.cc', 'foo/bar/baz.cc'], path: 'bar.cc', want: '$dir/bar.cc' },
    { desc: 'trims configured prefix', searchPath: '$dir', trimPath: 'some-path:/some/remote/path', fs: ['my-project/foo/bar.cc'], path: '/some/remote/path/my-project/foo/bar.cc', want: '$dir/my-project/foo/bar.cc' },
    { desc: 'trims heuristically', searchPath: '$dir/my-project', fs: ['my-project/foo/bar.cc'], path: '/some/remote/path/my-project/foo/bar.cc', want: '$dir/my-project/foo/bar.cc' },
    { desc: 'error when not found', searchPath: '', fs: [], path: 'foo.cc' },
  ];
  it.each(cases)('$desc', ({ desc, searchPath, trimPath, fs, path, want }) => {
    const root = join(dir, desc.replace(/\W+/g, '-'));
    const sub = (s: string) => s.replaceAll('$dir', root);
    for (const f of fs) {
      mkdirSync(dirname(join(root, f)), { recursive: true });
      writeFileSync(join(root, f), join(root, f) + '\n');
    }
    const got = sourceFileReader(sub(searchPath), trimPath ?? '')(sub(path));
    if (want === undefined) expect(got).toEqual({ error: `could not find file ${sub(path)} on path ${sub(searchPath)}` });
    else expect(got).toEqual({ lines: [sub(want)] });
  });

  it('a missing absolute file gives Go\'s open error', () => {
    expect(sourceFileReader('', '')(join(dir, 'absent.c'))).toEqual({ error: `open ${join(dir, 'absent.c')}: no such file or directory` });
  });

  it('a file: URL (V8 script names, source-mapped .ts files) is read at its path, also as cleaned to file:/…', () => {
    const f = join(dir, 'app.ts');
    writeFileSync(f, 'export {};\n');
    expect(sourceFileReader(dir, '')(`file://${f}`)).toEqual({ lines: ['export {};'] });
    expect(sourceFileReader(dir, '')(`file:${f}`)).toEqual({ lines: ['export {};'] });
  });

  it('lines as bufio.ScanLines gives them: \\r\\n and a last line without \\n', () => {
    const f = join(dir, 'crlf.c');
    writeFileSync(f, 'a\r\nb\n\nc');
    expect(sourceFileReader(dir, '')(f)).toEqual({ lines: ['a', 'b', '', 'c'] });
  });

  it.skipIf(!existsSync('/dev/zero'))('a device (/dev/zero) is reported, not read without end', () => {
    expect(sourceFileReader('', '')('/dev/zero')).toEqual({ error: 'open /dev/zero: not a regular file' });
  });

  it('a file of more lines than MAX_SOURCE_FILE_LINES is reported, not read (200 MB of empty lines ran past the heap)', () => {
    const f = join(dir, 'newlines.c');
    writeFileSync(f, Buffer.alloc(MAX_SOURCE_FILE_LINES + 1, 0x0a));
    expect(sourceFileReader('', '')(f)).toEqual({ error: `open ${f}: more than ${MAX_SOURCE_FILE_LINES} lines` });
    writeFileSync(f, Buffer.alloc(MAX_SOURCE_FILE_LINES, 0x0a));
    const read = sourceFileReader('', '')(f);
    expect('lines' in read && read.lines.length).toBe(MAX_SOURCE_FILE_LINES);
  });

  it('a directory reads as no lines and no error (Go opens it and reads nothing)', () => {
    expect(sourceFileReader(dir, '')(dir)).toEqual({ lines: [] });
  });
});
