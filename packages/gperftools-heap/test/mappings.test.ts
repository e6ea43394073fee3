import { describe, expect, it } from 'vitest';
import { parseProcMaps, removeLoggingInfo } from '../src/node.js';

/** google/pprof profile/legacy_profile_test.go TestParseMappingEntry, all 14 cases. */
const CASES: [string, null | { start: bigint; limit: bigint; offset?: bigint; file?: string; buildId?: string }][] = [
  ['00400000-02e00000 r-xp 00000000 00:00 0', { start: 0x400000n, limit: 0x2e00000n }],
  ['02e00000-02e8a000 r-xp 02a00000 00:00 15953927    /foo/bin', { start: 0x2e00000n, limit: 0x2e8a000n, offset: 0x2a00000n, file: '/foo/bin' }],
  ['02e00000-02e8a000 r-xp 000000 00:00 15953927    [vdso]', { start: 0x2e00000n, limit: 0x2e8a000n, file: '[vdso]' }],
  ['  02e00000-02e8a000: /foo/bin (@2a00000)', { start: 0x2e00000n, limit: 0x2e8a000n, offset: 0x2a00000n, file: '/foo/bin' }],
  ['  02e00000-02e8a000: /foo/bin (deleted)', { start: 0x2e00000n, limit: 0x2e8a000n, file: '/foo/bin' }],
  ['  02e00000-02e8a000: /foo/bin', { start: 0x2e00000n, limit: 0x2e8a000n, file: '/foo/bin' }],
  ['  02e00000-02e8a000: [vdso]', { start: 0x2e00000n, limit: 0x2e8a000n, file: '[vdso]' }],
  [
    '0xff6810563000 0xff6810565000 r-xp abc_exe 87c4d547f895cfd6a370e08dc5c5ee7bd4199d5b',
    { start: 0xff6810563000n, limit: 0xff6810565000n, file: 'abc_exe', buildId: '87c4d547f895cfd6a370e08dc5c5ee7bd4199d5b' },
  ],
  ['7f5e5435e000-7f5e5455e000 --xp 00002000 00:00 1531        myprogram', { start: 0x7f5e5435e000n, limit: 0x7f5e5455e000n, offset: 0x2000n, file: 'myprogram' }],
  ['7f7472710000-7f7472722000 r-xp 00000000 fc:00 790190      /usr/lib/libfantastic-1.2.so', { start: 0x7f7472710000n, limit: 0x7f7472722000n, file: '/usr/lib/libfantastic-1.2.so' }],
  ['7f47a542f000-7f47a5447000: /lib/libpthread-2.15.so', { start: 0x7f47a542f000n, limit: 0x7f47a5447000n, file: '/lib/libpthread-2.15.so' }],
  ['0x40000-0x80000 /path/to/binary      (@FF00)            abc123456', { start: 0x40000n, limit: 0x80000n, file: '/path/to/binary', offset: 0xff00n, buildId: 'abc123456' }],
  [
    'W1220 15:07:15.201776    8272 logger.cc:12033] --- Memory map: ---\n0x40000-0x80000 /path/to/binary      (@FF00)            abc123456',
    { start: 0x40000n, limit: 0x80000n, file: '/path/to/binary', offset: 0xff00n, buildId: 'abc123456' },
  ],
  [
    'W1220 15:07:15.201776    8272 logger.cc:12033] --- Memory map: ---\nW1220 15:07:15.202776    8272 logger.cc:12036]   0x40000-0x80000 /path/to/binary      (@FF00)            abc123456',
    { start: 0x40000n, limit: 0x80000n, file: '/path/to/binary', offset: 0xff00n, buildId: 'abc123456' },
  ],
  ['7f5e5435e000-7f5e5455e000 ---p 00002000 00:00 1531        myprogram', null],
];

describe('mapping lines (google/pprof TestParseMappingEntry)', () => {
  CASES.forEach(([entry, want], i) => {
    it(`case ${i + 1}: ${JSON.stringify(entry.slice(0, 60))}`, () => {
      const got = parseProcMaps(entry.split('\n'));
      if (want === null) {
        expect(got).toHaveLength(0);
        return;
      }
      expect(got).toHaveLength(1);
      expect(got[0]).toEqual({ id: 0, start: want.start, limit: want.limit, offset: want.offset ?? 0n, file: want.file ?? '', buildId: want.buildId ?? '' });
    });
  });

  it('substitutes name=value variables in later lines, in order', () => {
    const got = parseProcMaps(['root=/opt', 'app=$root/bin', '00400000-00500000: $app/server', '00600000-00700000: $root/lib/x.so']);
    expect(got.map((m) => m.file)).toEqual(['/opt/bin/server', '/opt/lib/x.so']);
  });

  it('strips glog prefixes only when they end in "file:line] "', () => {
    expect(removeLoggingInfo('I0102 10:00:00.000 123 main.cc:42] 00400000-00500000: /bin/x')).toBe('00400000-00500000: /bin/x');
    expect(removeLoggingInfo('[vdso] main.cc:42] x')).toBe('[vdso] main.cc:42] x');
  });

  it('skips non-executable entries of both forms and ignores junk lines', () => {
    const got = parseProcMaps([
      '00400000-00500000 rw-p 00000000 00:00 0 /bin/data',
      '00400000-00500000 r--p 00000000 00:00 0 /bin/ro',
      'not a mapping at all',
      '00600000-00700000 r-xp 00000000 00:00 0 /bin/text',
    ]);
    expect(got.map((m) => m.file)).toEqual(['/bin/text']);
  });
});
