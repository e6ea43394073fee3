import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { haveSharedFixtures, sharedFixturePath } from '@profkit/test-utils';
import { describe, expect, it } from 'vitest';
import { ProfileBuilder, formatPprofDump, goDurationString, goTimeStringUTC, type Profile } from '../src/node/index.js';

function build(): Profile {
  const b = new ProfileBuilder({
    sampleTypes: [
      { type: 'samples', unit: 'count' },
      { type: 'cpu', unit: 'nanoseconds' },
    ],
    facts: {
      comments: ['hello', 'second comment'],
      doc_url: 'https://doc',
      period_type: { type: 'cpu', unit: 'nanoseconds' },
      period: 10_000_000n,
      time_nanos: 1_700_000_000_123_000_000n,
      duration_nanos: 16_512_345_000_000n,
      default_sample_type: 'cpu',
    },
  });
  const m1 = b.internMapping({ memoryStart: 0x400000n, memoryLimit: 0x500000n, fileOffset: 0x1000n, filename: '/bin/app', buildId: 'abc123', hasFunctions: true, hasFilenames: true });
  const m2 = b.internMapping({});
  const main = b.internFunction({ name: 'main', filename: 'main.c', startLine: 1 });
  const foo = b.internFunction({ name: 'foo', systemName: '_Z3foov', filename: 'foo.cc', startLine: 10 });
  const inl = b.internFunction({ name: 'inl', filename: 'inl.h' });
  const l1 = b.internLocation({ functionId: main, line: 12, address: 0x401000n, mappingId: m1 });
  const l2 = b.internLocation({ functionId: inl, line: 3, column: 7, address: 0x401100n, mappingId: m1, isFolded: true, inlinedInto: [{ functionId: foo, line: 20 }] });
  const l3 = b.internLocation({ address: 0x7f00n, mappingId: m2 });
  const l4 = b.internLocation({});
  b.addSample([l2, l1], [1, 10_000_000], [
    { key: 'thread', str: 't1' },
    { key: 'bytes', num: 5, unit: 'bytes' },
    { key: 'zone', str: 'b' },
    { key: 'zone', str: 'a' },
  ]);
  b.addSample([l3, l4], [-2, 0], [
    { key: 'n', num: 7 },
    { key: 'm', num: 1 },
    { key: 'm', num: 2, unit: 'ms' },
  ]);
  b.addSample([], [0, 5]);
  return b.build();
}

describe('formatPprofDump', () => {
  it('prints google/pprof Profile.String() byte for byte', () => {
    expect(formatPprofDump(build())).toBe(
      [
        'Comment: hello',
        'Comment: second comment',
        'Doc: https://doc',
        'PeriodType: cpu nanoseconds',
        'Period: 10000000',
        'Time: 2023-11-14 22:13:20.123 +0000 UTC',
        'Duration: 4h35',
        'Samples:',
        'samples/count cpu/nanoseconds[dflt]',
        '          1   10000000: 2 1 ',
        '                thread:[t1] zone:[b a]',
        '                bytes:[5 bytes]',
        '         -2          0: 3 4 ',
        '                m:[1  2 ms] n:[7]',
        '          0          5: ',
        'Locations',
        '     1: 0x401000 M=1 main main.c:12:0 s=1',
        '     2: 0x401100 M=1 [F] inl inl.h:3:7 s=0',
        '             foo foo.cc:20:0 s=10(_Z3foov)',
        '     3: 0x7f00 M=2 ',
        '     4: 0x0 ',
        'Mappings',
        '1: 0x400000/0x500000/0x1000 /bin/app abc123 [FN][FL]',
        '2: 0x0/0x0/0x0   ',
        '',
      ].join('\n'),
    );
  });

  it('sorts label strings in Go byte order (code points, not UTF-16 units)', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    b.addSample([], [1], [
      { key: '\u{1F600}', str: 'x' },
      { key: '\uFB00', str: 'y' },
      { key: 'z', str: 'w' },
    ]);
    expect(formatPprofDump(b.build()).split('\n')[4]).toBe('                z:[w] \uFB00:[y] \u{1F600}:[x]');
  });

  it('omits unset optional header lines', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    expect(formatPprofDump(b.build())).toBe('Period: 0\nSamples:\nsamples/count\nLocations\nMappings\n');
  });

  it('formats Go durations and times', () => {
    const cases: [bigint, string][] = [
      [1_500_000_000n, '1.5s'],
      [1500n, '1.5\u00b5s'],
      [999n, '999ns'],
      [3_600_000_000_000n, '1h0m0s'],
      [60_000_000_000n, '1m0s'],
      [-2_000_000n, '-2ms'],
      [16_512_345_000_000n, '4h35m12.345s'],
      [100_000_000_000n, '1m40s'],
    ];
    for (const [d, s] of cases) expect(goDurationString(d)).toBe(s);
    expect(goTimeStringUTC(-1n)).toBe('1969-12-31 23:59:59.999999999 +0000 UTC');
    expect(goTimeStringUTC(0n + 1_000_000_000n)).toBe('1970-01-01 00:00:01 +0000 UTC');
  });
});

// The golden dumps of google/pprof (read by the pprof adapter's tests against parsed profiles);
// here we only check that our formatter's header rules agree with every golden's header shape.
const GOLDEN = 'pprof/profile/testdata';
const goldenDir = sharedFixturePath(GOLDEN);
const haveGoldens = haveSharedFixtures('dump.test', GOLDEN, 'the golden header checks are skipped');

describe.skipIf(!haveGoldens)('pprof golden dumps', () => {
  it('reproduces the header and mapping lines of cppbench.heap.string from its facts', () => {
    const golden = readFileSync(join(goldenDir, 'cppbench.heap.string'), 'utf8');
    const b = new ProfileBuilder({
      sampleTypes: [
        { type: 'objects', unit: 'count' },
        { type: 'space', unit: 'bytes' },
      ],
      facts: { period_type: { type: 'space', unit: 'bytes' }, period: 524288n },
    });
    b.internMapping({ memoryStart: 0x400000n, memoryLimit: 0xfcb000n, filename: '/home/cppbench_server_main' });
    const head = formatPprofDump(b.build()).split('\n');
    const g = golden.split('\n');
    expect(head.slice(0, 4)).toEqual(g.slice(0, 4));
    expect(g).toContain(head[6]);
    expect(head[6]).toBe('1: 0x400000/0xfcb000/0x0 /home/cppbench_server_main  ');
  });
});
