/**
 * `profkit raw` = `go tool pprof -raw` on a profile.proto without `period_type`: Go's decoder makes
 * an empty period type (`postDecode`), which `-raw` prints as `PeriodType: ` (type and unit empty);
 * profkit printed no such line. `traces` and `tags` on the same file are compared too.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProfileBuilder } from '@profkit/core';
import { serializePprof } from '@profkit/pprof';
import { goAvailable, profkit } from './views-helpers.js';
import { goPprofAsCompared } from './producers.js';

const tmp = mkdtempSync(join(tmpdir(), 'profkit-period-type-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.skipIf(!goAvailable)('a profile without period_type: raw / traces / tags = go tool pprof', () => {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const main = b.internFunction({ name: 'main', filename: 'main.go' });
  const work = b.internFunction({ name: 'work', filename: 'work.go' });
  b.addSample([b.internLocation({ functionId: work, line: 7, inlinedInto: [{ functionId: main, line: 3 }] })], [4n], [{ key: 'phase', str: 'load' }]);
  const file = join(tmp, 'no-period-type.pb.gz');
  writeFileSync(file, serializePprof(b.build()));

  it.each(['raw', 'traces', 'tags'])('%s', async (mode) => {
    const go = goPprofAsCompared([`-${mode}`, file], tmp);
    expect(go.code, go.stderr).toBe(0);
    const ours = await profkit([mode, file, '--quiet']);
    expect(ours.code, ours.stderr).toBe(0);
    expect(ours.stdout).toBe(go.stdout);
    if (mode === 'raw') expect(ours.stdout.split('\n')[0]).toBe('PeriodType:  ');
  });
});
