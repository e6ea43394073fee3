/**
 * Validating once: the decoder records what it proved (core's `recordReaderProof`), and the
 * registry's read skips those checks for the decoder's own, unchanged result. The skipped checks
 * must give what the full ones give on every decoded profile, and every rule must still fire on a
 * decoded profile that was changed afterwards.
 */

import { describe, expect, it } from 'vitest';
import { ErrorCodes, createRegistry, defineAdapter, isProfkitError, validate, type Profile, type ValidationResult } from '@profkit/core/node';
import { seededRandom } from '@profkit/test-utils';
import { pprofAdapter } from '../src/index.js';
import { decodeProfile, parsePprof } from '../src/codec.js';
import { PROTO_FIXTURES, everyFieldProfile, hasFixtures, pb, readFixture, str, type Field } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Mutable = any;

/** The problems of a validation, without the messages' wording. */
function problems(r: ValidationResult): unknown[] {
  return r.problems.map((p) => [p.severity, p.code, p.rule, p.table, p.column, p.row]);
}

/**
 * A small profile breaking rules the decoder does not check (so the validator must): the line
 * and start line may be negative, a label key empty, an address outside its mapping.
 * Strings: 0 '', 1 samples, 2 count, 3 f, 4 t.
 */
function notProven(o: { line?: number; startLine?: number; labelKey?: number; address?: number } = {}): Uint8Array {
  return pb([
    [1, [[1, 1], [2, 2]]],
    [2, [[1, { packed: [1, 2] }], [2, 3], [3, [[1, o.labelKey ?? 4], [2, 4]]]]],
    [3, [[1, 1], [2, 0x1000], [3, 0x2000]]],
    [4, [[1, 1], [2, 1], [3, o.address ?? 0x1800], [4, [[1, 1], [2, o.line ?? 7]]]]],
    [4, [[1, 2], [4, [[1, 1], [2, 8]]]]],
    [5, [[1, 1], [2, 3], [5, o.startLine ?? 1]]],
    ...['', 'samples', 'count', 'f', 't'].map((s) => [6, str(s)] as Field),
  ]);
}

const HAND_MADE: [string, Uint8Array][] = [
  ['every kind of field', everyFieldProfile()],
  ['a valid small profile', notProven()],
  ['a negative line (R31)', notProven({ line: -3 })],
  ['a negative start line (R41)', notProven({ startLine: -1 })],
  ['an empty label key (warning)', notProven({ labelKey: 0 })],
  ['an address outside its mapping (warning)', notProven({ address: 0x3000 })],
];

const FIXTURES: [string, () => Uint8Array][] = [
  ...HAND_MADE.map(([name, bytes]) => [name, () => bytes] as [string, () => Uint8Array]),
  ...(hasFixtures ? PROTO_FIXTURES.map((rel) => [rel, () => readFixture(rel)] as [string, () => Uint8Array]) : []),
];

describe('validating once: the trusted validation of the decoder\'s result equals the full one', () => {
  it.each(FIXTURES)('%s', (_name, bytes) => {
    const input = bytes();
    const trusted = validate(parsePprof(input).profile, { trustReader: 'pprof' });
    const fullOnce = validate(parsePprof(input).profile);
    expect(problems(trusted)).toEqual(problems(fullOnce));
    expect(trusted).toEqual(fullOnce);
  });

  it('on randomly mutated inputs that still decode (odd ids, lines, labels, flags)', () => {
    const rnd = seededRandom(17);
    const bases = HAND_MADE.map(([, bytes]) => bytes);
    let decoded = 0;
    let invalid = 0;
    for (let k = 0; k < 3000; k++) {
      const m = bases[k % bases.length]!.slice();
      for (let j = 0; j < 1 + Math.floor(rnd() * 3); j++) m[Math.floor(rnd() * m.length)] = Math.floor(rnd() * 256);
      let trusted: ValidationResult;
      try {
        trusted = validate(decodeProfile(m).profile, { trustReader: 'pprof' });
      } catch {
        continue; // the decoder refused it: nothing reaches the validator
      }
      decoded++;
      const fullOnce = validate(decodeProfile(m).profile);
      if (!fullOnce.ok) invalid++;
      expect(trusted, `mutation ${k}`).toEqual(fullOnce);
    }
    // Enough inputs reach the validator (437 of 3000 with this seed), some of them invalid for it.
    expect(decoded).toBeGreaterThan(300);
    expect(invalid).toBeGreaterThan(10);
  });

  it('the registry\'s read still reports what the decoder does not check', async () => {
    const reg = createRegistry([pprofAdapter]);
    await expect(reg.read(notProven({ line: -3 }))).rejects.toMatchObject({ code: ErrorCodes.INVALID_PROFILE, detail: { rule: 'R31' } });
    await expect(reg.read(notProven({ startLine: -1 }))).rejects.toMatchObject({ code: ErrorCodes.INVALID_PROFILE, detail: { rule: 'R41' } });
    expect((await reg.read(notProven({ labelKey: 0 }))).warnings.map((w) => w.code)).toEqual(['PROFKIT_LABEL_EMPTY_KEY']);
    expect((await reg.read(notProven({ address: 0x3000 }))).warnings.map((w) => w.code)).toEqual(['PROFKIT_ADDRESS_OUTSIDE_MAPPING']);
  });
});

/**
 * What each proof rests on, one input per check of the decoder (random mutations rarely reach an
 * inline line's function): an input breaking a proven rule is refused, or read into a profile
 * that keeps the rule. Strings as in `notProven`: 0 '', 1 samples, 2 count, 3 f, 4 t.
 */
describe('validating once: the decoder refuses or repairs every input breaking a rule it proves', () => {
  const profileOf = (...fields: Field[]): Uint8Array => pb([[1, [[1, 1], [2, 2]]], ...fields, ...['', 'samples', 'count', 'f', 't'].map((s) => [6, str(s)] as Field)]);
  const fn = (id: number): Field => [5, [[1, id], [2, 3]]];
  const location = (id: number, ...lineFunctions: number[]): Field => [4, [[1, id], ...lineFunctions.map((f) => [4, [[1, f], [2, 1]]] as Field)]];
  const sample = (...ids: number[]): Field => [2, [[1, { packed: ids }], [2, 1]]];

  it.each([
    ['samples.stacks: a stack entry no location has', profileOf(sample(1, 9), location(1, 1), fn(1)), 'sample has nil location'],
    ['locations.ids: two locations with one id', profileOf(sample(1), location(1, 1), location(1, 1), fn(1)), 'multiple locations with same id: 1'],
    ['functions.ids: function id 0', profileOf(sample(1), location(1, 1), fn(1), fn(0)), 'found function with reserved ID=0'],
    ['functions.ids: two functions with one id', profileOf(sample(1), location(1, 1), fn(1), fn(1)), 'multiple functions with same id: 1'],
    ['locations.functions: a first line of a function no function has', profileOf(sample(1), location(1, 7), fn(1)), 'location id: 1 has a line with nil function'],
    ['inline_lines.functions: an inline line of a function no function has', profileOf(sample(1), location(1, 1, 7), fn(1)), 'location id: 1 has a line with nil function'],
    ['inline_lines.functions: an inline line of function 0', profileOf(sample(1), location(1, 1, 0), fn(1)), 'location id: 1 has a line with nil function'],
    ['locations.inline: inline lines under a first line of function 0', profileOf(sample(1), location(1, 0, 1), fn(1)), 'location id: 1 has a line with nil function'],
  ])('%s: refused', (_name, input, message) => {
    expect(() => decodeProfile(input)).toThrow(message);
  });

  it('functions.names, labels.kind, flags: an empty name, a label with a string and a number, flags above 1 are read as valid values', () => {
    const input = profileOf(
      [2, [[1, { packed: [1] }], [2, 1], [3, [[1, 4], [2, 3], [3, 5], [4, 4]]]]],
      [3, [[1, 1], [7, 2], [8, 3], [9, 4], [10, 5]]],
      [4, [[1, 1], [2, 1], [5, 2], [4, [[1, 1], [2, 1]]]]],
      [5, [[1, 1], [2, 0], [3, 0]]],
    );
    const { profile: p } = decodeProfile(input);
    expect([p.functions.name[0], p.functions.system_name[0]]).toEqual(['<?>', '<?>']);
    expect([p['.labels'].is_num[0], p['.labels'].str[0], p['.labels'].num[0], p['.labels'].num_unit[0]]).toEqual([0, 'f', 0n, '']);
    const m = p['.mappings'];
    expect([m.has_functions[0], m.has_filenames[0], m.has_line_numbers[0], m.has_inline_frames[0], p.locations['.is_folded'][0]]).toEqual([1, 1, 1, 1, 1]);
    expect(validate(p).problems).toEqual([]);
  });
});

/**
 * Each rule the decoder proves, broken in place in its result (see everyFieldProfile: samples
 * [1,2,1] and [2] with a string and a numeric label; location 1 has an inline line; functions 1, 2;
 * mapping 1), and the code the full validation reports for it.
 */
const BREAK_PROVEN: [rule: string, code: string, breakIt: (p: Mutable) => void][] = [
  ['samples.stacks', 'R24_SAMPLE_LOCATION_EXISTS', (p) => (p.samples.locations.location_id[1] = 99)],
  ['samples.label_offsets', 'PROFKIT_CSR_NOT_MONOTONE', (p) => (p.samples['.label_offsets'][1] = 3)],
  ['locations.ids', 'R29_LOCATION_ID_UNIQUE', (p) => (p.locations.location_id[1] = 1)],
  ['locations.functions', 'R30_LOCATION_FUNCTION_EXISTS', (p) => (p.locations.function_id[1] = 42)],
  ['locations.inline', 'PROFKIT_INLINE_WITHOUT_LINE', (p) => (p.locations.function_id[0] = 0)],
  ['inline_lines.functions', 'PPROF_LINE_FUNCTION_EXISTS', (p) => (p['.inline_lines'].function_id[0] = 42)],
  ['functions.ids', 'PPROF_FUNCTION_ID_ZERO', (p) => (p.functions.function_id[1] = 0)],
  ['functions.names', 'R39_FUNCTION_NAME_NONEMPTY', (p) => (p.functions.name[0] = '')],
  ['labels.kind', 'PROFKIT_LABEL_KIND', (p) => (p['.labels'].num[0] = 5n)],
  ['flags', 'PROFKIT_FLAG_NOT_BOOLEAN', (p) => (p['.mappings'].has_functions[0] = 2)],
];

describe('validating once: every rule still fires on a decoded profile changed afterwards', () => {
  const decoded = (): Mutable => decodeProfile(everyFieldProfile()).profile;

  it.each(BREAK_PROVEN)('%s (%s): a caller\'s validation, a second read-time validation and a write see it', async (_rule, code, breakIt) => {
    // A caller validating a decoded, then changed, profile.
    const p = decoded();
    breakIt(p);
    const r = validate(p);
    expect(r.problems.map((x) => x.code)).toContain(code);
    expect(problems(validate(p, { trustReader: 'pprof' }))).toEqual(problems(r));

    // Read through the registry (validated there, once), changed, written: the write refuses it.
    const reg = createRegistry([pprofAdapter]);
    const read = await reg.read(everyFieldProfile());
    breakIt(read.profile);
    const err = await reg.serialize(read.profile, { format: 'pprof' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isProfkitError(err) && err.code).toBe(ErrorCodes.INVALID_PROFILE);
    expect(isProfkitError(err) && (err.detail.problems as { code: string }[]).map((x) => x.code)).toContain(code);
  });

  it.each(BREAK_PROVEN)('%s (%s): an adapter that changes the decoder\'s result before returning it gets it reported', async (_rule, code, breakIt) => {
    const changing = defineAdapter({
      ...pprofAdapter,
      name: 'pprof-changing',
      load: async () => ({
        async read(input) {
          const { profile, warnings } = decodeProfile(await input.bytes());
          breakIt(profile);
          return { profile, warnings, format: 'pprof' };
        },
      }),
    });
    const err = await createRegistry([changing])
      .read(everyFieldProfile())
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isProfkitError(err) && err.code).toBe(ErrorCodes.INVALID_PROFILE);
    expect(isProfkitError(err) && (err.detail.problems as { code: string }[]).map((x) => x.code)).toContain(code);
  });

  it.each(BREAK_PROVEN)('%s (%s): the decoder records the proof, used by the one validation trusting it', (_rule, code, breakIt) => {
    // The contract: trustReader is for the reader's result as it returned it. Breaking it in
    // place before that one validation goes unseen there (the check was skipped: the fast path
    // is taken for this rule), and is reported by the next validation.
    const p: Profile = decoded();
    breakIt(p);
    expect(validate(p, { trustReader: 'pprof' }).errorCount).toBe(0);
    expect(validate(p, { trustReader: 'pprof' }).problems.map((x) => x.code)).toContain(code);
  });
});
