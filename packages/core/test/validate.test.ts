import { describe, expect, it } from 'vitest';
import {
  ErrorCodes,
  ProfileBuilder,
  ProfkitError,
  assertValid,
  createProfile,
  isRPackageVersion,
  recordReaderProof,
  validate,
  type Problem,
  type Profile,
  type ProvableRule,
  type ValidationMode,
  type ValidationResult,
} from '../src/node/index.js';

// ---------------------------------------------------------------------------------------------
// Base profiles. Rows are listed in comments because the cases below break specific rows.

/**
 * Uses most of the model; valid in profkit mode.
 * functions: 0 main(id 1), 1 foo(2), 2 inl(3), 3 orphan(4)
 * locations: 0 id 1 main:12 @0x401000 M1; 1 id 2 inl:3:5 inlined into foo:20:2 @0x402000 M1;
 *            2 id 3 unsymbolized @0x403000 M1; 3 id 4 main:99 (orphan)
 * mappings: 0 id 1 [0x400000, 0x500000); 1 id 2 (unused)
 * samples: 0 [2,1] (1,100) labels thread=main, bytes=100; 1 [3,1] (2,-50); 2 [] (0,0) thread=gc;
 *          3 [1] (3,300)
 */
function richProfile(): Profile {
  const b = new ProfileBuilder({
    sampleTypes: [
      { type: 'alloc_objects', unit: 'count' },
      { type: 'alloc_space', unit: 'bytes' },
    ],
    facts: { default_sample_type: 'alloc_space', period: 524288n, period_type: { type: 'space', unit: 'bytes' } },
  });
  const m1 = b.internMapping({ memoryStart: 0x400000n, memoryLimit: 0x500000n, filename: '/bin/app', buildId: 'abc', hasFunctions: true });
  b.internMapping({ memoryStart: 0x7f0000000000n, memoryLimit: 0x7f0000100000n, filename: '/lib/libc.so.6' });
  const fMain = b.internFunction({ name: 'main', filename: 'main.c', startLine: 1 });
  const fFoo = b.internFunction({ name: 'foo', systemName: '_Z3foov', filename: 'foo.c', startLine: 10 });
  const fInl = b.internFunction({ name: 'inl', filename: 'foo.h' });
  b.internFunction({ name: 'orphan' });
  const lMain = b.internLocation({ functionId: fMain, line: 12, address: 0x401000n, mappingId: m1 });
  const lFoo = b.internLocation({ functionId: fInl, line: 3, column: 5, address: 0x402000n, mappingId: m1, inlinedInto: [{ functionId: fFoo, line: 20, column: 2 }] });
  const lRaw = b.internLocation({ address: 0x403000n, mappingId: m1 });
  b.internLocation({ functionId: fMain, line: 99 });
  b.addSample([lFoo, lMain], [1, 100], [{ key: 'thread', str: 'main' }, { key: 'bytes', num: 100, unit: 'bytes' }]);
  b.addSample([lRaw, lMain], [2, -50]);
  b.addSample([], [0, 0], [{ key: 'thread', str: 'gc' }]);
  b.addSample([lMain], [3, 300]);
  b.setSampleExtension('test-ext', 'tid', 7);
  b.extension('test-ext').facts = { interval: 20000, flags: ['a', 'b'], big: 1n, nested: { ok: true, none: null } };
  b.extension('test-ext').tables = { files: { id: Uint32Array.of(1, 2), path: ['a.R', 'b.R'] } };
  return b.build();
}

/**
 * What the R package can read (valid in strict-r mode).
 * functions: 0 f(id 1) a.R start 1, 1 g(2), 2 h(3, orphan)
 * locations: 0 id 1 f:3; 1 id 2 g; 2 id 3 no function (R's NA); 3 id 4 f:7 (orphan)
 * samples: 0 [1,2] 1; 1 [2] 5; 2 [3,1] 2; 3 [] 1
 */
function rProfile(): Profile {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const fA = b.internFunction({ name: 'f', filename: 'a.R', startLine: 1 });
  const fB = b.internFunction({ name: 'g' });
  b.internFunction({ name: 'h' });
  const lA = b.internLocation({ functionId: fA, line: 3 });
  const lB = b.internLocation({ functionId: fB });
  const lNA = b.internLocation({});
  b.internLocation({ functionId: fA, line: 7 });
  b.addSample([lA, lB], [1]);
  b.addSample([lB], [5]);
  b.addSample([lNA, lA], [2]);
  b.addSample([], [1]);
  return b.build();
}

interface Expected {
  code: string;
  rule: string;
  table: string;
  column?: string;
  row?: number;
  severity?: 'error' | 'warning';
}

/** The identifying fields of the problems (messages left out), in order. */
function summary(r: ValidationResult): Expected[] {
  return r.problems.map((p: Problem) => {
    const e: Expected = { code: p.code, rule: p.rule, table: p.table, severity: p.severity };
    if (p.column !== undefined) e.column = p.column;
    if (p.row !== undefined) e.row = p.row;
    return e;
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Mutable = any;

interface Case {
  /** What is broken. */
  name: string;
  base?: () => Profile;
  mode?: ValidationMode;
  /** Breaks the rule. */
  fail: (p: Mutable) => void;
  /** Exactly the problems expected (severity defaults to error). */
  expect: Expected[];
  /** A near miss that must pass (no problems at all); default: the unchanged base. */
  pass?: (p: Mutable) => void;
}

function run(c: Case, mutate: ((p: Mutable) => void) | undefined): ValidationResult {
  const p = (c.base ?? richProfile)() as Mutable;
  mutate?.(p);
  return validate(p, { mode: c.mode ?? 'profkit' });
}

function check(c: Case): void {
  const bad = run(c, c.fail);
  expect(summary(bad)).toEqual(c.expect.map((e) => ({ severity: 'error', ...e })));
  expect(bad.ok).toBe(!c.expect.some((e) => (e.severity ?? 'error') === 'error'));
  for (const p of bad.problems) expect(p.message).toMatch(/^[^\n]+$/);
  const good = run(c, c.pass);
  expect(summary(good)).toEqual([]);
  expect(good.ok).toBe(true);
}

const INT32_MAX = 2147483647;

// ---------------------------------------------------------------------------------------------

describe('validate: base profiles', () => {
  it('accepts the rich profile in profkit mode and says why R could not read it', () => {
    expect(validate(richProfile())).toEqual({ ok: true, problems: [], errorCount: 0, warningCount: 0, omitted: 0 });
    expect(summary(validate(richProfile(), { mode: 'strict-r' }))).toEqual([
      { code: 'R14_SAMPLE_TYPES_ONE_ROW', rule: 'R14', table: 'sample_types', severity: 'error' },
      { code: 'R15_SAMPLE_TYPE_SAMPLES', rule: 'R15', table: 'sample_types', column: 'type', row: 0, severity: 'error' },
      { code: 'R15_SAMPLE_TYPE_SAMPLES', rule: 'R15', table: 'sample_types', column: 'type', row: 1, severity: 'error' },
      { code: 'R16_SAMPLE_UNIT_COUNT', rule: 'R16', table: 'sample_types', column: 'unit', row: 1, severity: 'error' },
      { code: 'R20_SAMPLE_VALUE_POSITIVE', rule: 'R20', table: 'samples', column: 'value', row: 2, severity: 'error' },
    ]);
  });

  it('accepts the R-like profile in both modes', () => {
    expect(validate(rProfile()).problems).toEqual([]);
    expect(validate(rProfile(), { mode: 'strict-r' }).problems).toEqual([]);
  });

  it('accepts profiles built by ProfileBuilder, in strict-r mode when they fit R', () => {
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    const f = b.internFunction({ name: 'f', filename: 'x.R', startLine: 2 });
    const loc = b.internLocation({ functionId: f, line: 5 });
    for (let i = 1; i <= 50; i++) b.addSample([loc], [i]);
    const p = b.build();
    expect(validate(p).ok).toBe(true);
    expect(validate(p, { mode: 'strict-r' }).ok).toBe(true);
    // Values of 0 are fine for pprof but not for R.
    b.addSample([loc], [0]);
    const q = b.build();
    expect(validate(q).ok).toBe(true);
    expect(summary(validate(q, { mode: 'strict-r' }))).toEqual([
      { code: 'R20_SAMPLE_VALUE_POSITIVE', rule: 'R20', table: 'samples', column: 'value', row: 50, severity: 'error' },
    ]);
  });

  it('accepts the empty profile of createProfile in profkit mode only', () => {
    expect(validate(createProfile()).problems).toEqual([]);
    expect(summary(validate(createProfile(), { mode: 'strict-r' }))).toEqual([
      { code: 'R14_SAMPLE_TYPES_ONE_ROW', rule: 'R14', table: 'sample_types', severity: 'error' },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Structural rules (the shapes of schema.ts).

const structural: Case[] = [
  {
    name: 'R4: a required table is missing',
    fail: (p) => delete p.meta,
    expect: [{ code: 'SCHEMA_MISSING_TABLE', rule: 'R4', table: 'meta' }],
    pass: (p) => (p['.rprof'] = { header: 'sample.interval=20000' }),
  },
  {
    name: 'R4: an undotted component that is not one of the model',
    fail: (p) => (p.rprof = {}),
    expect: [{ code: 'SCHEMA_UNKNOWN_COMPONENT', rule: 'R4', table: 'rprof' }],
    pass: (p) => (p['.msg'] = {}),
  },
  {
    name: 'profkit.schema: a profkit component is missing',
    fail: (p) => delete p['.labels'],
    expect: [{ code: 'SCHEMA_MISSING_TABLE', rule: 'profkit.schema', table: '.labels' }],
  },
  {
    name: 'R3: a table is not an object of columns',
    fail: (p) => (p.functions = [p.functions]),
    expect: [{ code: 'SCHEMA_TABLE_TYPE', rule: 'R3', table: 'functions' }],
  },
  {
    name: 'profkit.schema: a profkit table is not an object',
    fail: (p) => (p['.mappings'] = 5),
    expect: [{ code: 'SCHEMA_TABLE_TYPE', rule: 'profkit.schema', table: '.mappings' }],
  },
  {
    name: 'R3: columns of a table differ in length',
    base: rProfile,
    fail: (p) => p.functions.filename.push('extra.R'),
    expect: [{ code: 'SCHEMA_COLUMN_LENGTH', rule: 'R3', table: 'functions', column: 'filename' }],
  },
  {
    name: 'R5: meta lacks a column',
    fail: (p) => delete p.meta.value,
    expect: [{ code: 'SCHEMA_MISSING_COLUMN', rule: 'R5', table: 'meta', column: 'value' }],
    pass: (p) => (p.meta['.note'] = ['converted']),
  },
  {
    name: 'R5: meta has an undotted extra column',
    fail: (p) => (p.meta.note = ['converted']),
    expect: [{ code: 'SCHEMA_UNKNOWN_COLUMN', rule: 'R5', table: 'meta', column: 'note' }],
    pass: (p) => (p.meta['.note'] = ['converted']),
  },
  {
    name: 'R6: meta.key is not character',
    fail: (p) => (p.meta.key = [1]),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'R6', table: 'meta', column: 'key' }],
  },
  {
    name: 'R7: meta.value is not character',
    fail: (p) => (p.meta.value = '1.0'),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'R7', table: 'meta', column: 'value' }],
  },
  {
    name: 'R11: sample_types lacks a column',
    fail: (p) => delete p.sample_types.unit,
    expect: [{ code: 'SCHEMA_MISSING_COLUMN', rule: 'R11', table: 'sample_types', column: 'unit' }],
  },
  {
    name: 'R11: sample_types has an undotted extra column',
    fail: (p) => (p.sample_types.aggregation = ['sum', 'sum']),
    expect: [{ code: 'SCHEMA_UNKNOWN_COLUMN', rule: 'R11', table: 'sample_types', column: 'aggregation' }],
  },
  {
    name: 'R12: sample_types.type is not character',
    fail: (p) => (p.sample_types.type = ['alloc_objects', 2]),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'R12', table: 'sample_types', column: 'type' }],
  },
  {
    name: 'R13: sample_types.unit is not character',
    fail: (p) => (p.sample_types.unit = new Uint8Array(2)),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'R13', table: 'sample_types', column: 'unit' }],
  },
  {
    name: 'R17: samples lacks a column',
    fail: (p) => delete p.samples.value,
    expect: [{ code: 'SCHEMA_MISSING_COLUMN', rule: 'R17', table: 'samples', column: 'value' }],
  },
  {
    name: 'R17: samples has an undotted extra column',
    fail: (p) => (p.samples.weight = new Float64Array(4)),
    expect: [{ code: 'SCHEMA_UNKNOWN_COLUMN', rule: 'R17', table: 'samples', column: 'weight' }],
    pass: (p) => (p.samples['.weight'] = new Float64Array(4)),
  },
  {
    name: 'R18: samples.value is not an int64 column',
    fail: (p) => (p.samples.value = Float64Array.from(p.samples.value, Number)),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'R18', table: 'samples', column: 'value' }],
  },
  {
    name: 'R19: samples.locations is not a list column',
    fail: (p) => (p.samples.locations = [[2, 1], [3, 1], [], [1]]),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'R19', table: 'samples', column: 'locations' }],
  },
  {
    name: 'R21: the stack offsets are not a Uint32Array',
    fail: (p) => (p.samples.locations.offsets = Int32Array.from(p.samples.locations.offsets)),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'R21', table: 'samples', column: 'locations.offsets' }],
  },
  {
    name: 'R22: stack location ids are not a Uint32Array',
    fail: (p) => (p.samples.locations.location_id = Float64Array.from(p.samples.locations.location_id)),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'R22', table: 'samples', column: 'locations.location_id' }],
  },
  {
    name: 'R23: the stack column is not named location_id',
    fail: (p) => {
      p.samples.locations.id = p.samples.locations.location_id;
      delete p.samples.locations.location_id;
    },
    expect: [{ code: 'SCHEMA_MISSING_COLUMN', rule: 'R23', table: 'samples', column: 'locations.location_id' }],
  },
  {
    name: 'R25: locations lacks a column',
    fail: (p) => delete p.locations.line,
    expect: [{ code: 'SCHEMA_MISSING_COLUMN', rule: 'R25', table: 'locations', column: 'line' }],
  },
  {
    name: 'R25: locations has an undotted extra column',
    fail: (p) => (p.locations.address = p.locations['.address']),
    expect: [{ code: 'SCHEMA_UNKNOWN_COLUMN', rule: 'R25', table: 'locations', column: 'address' }],
  },
  {
    name: 'R26: locations.location_id is not a Uint32Array',
    fail: (p) => (p.locations.location_id = Int32Array.from(p.locations.location_id)),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'R26', table: 'locations', column: 'location_id' }],
  },
  {
    name: 'R27: locations.function_id is not a Uint32Array',
    fail: (p) => (p.locations.function_id = Array.from(p.locations.function_id)),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'R27', table: 'locations', column: 'function_id' }],
  },
  {
    name: 'R28: locations.line is not a Float64Array',
    fail: (p) => (p.locations.line = Uint32Array.from(p.locations.line)),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'R28', table: 'locations', column: 'line' }],
  },
  {
    name: 'R32: functions lacks a column',
    fail: (p) => delete p.functions.filename,
    expect: [{ code: 'SCHEMA_MISSING_COLUMN', rule: 'R32', table: 'functions', column: 'filename' }],
  },
  {
    name: 'R32: functions has the documented but wrong column file_name',
    fail: (p) => (p.functions.file_name = p.functions.filename),
    expect: [{ code: 'SCHEMA_UNKNOWN_COLUMN', rule: 'R32', table: 'functions', column: 'file_name' }],
    pass: (p) => (p.functions['.file_id'] = new Uint32Array(4)),
  },
  {
    name: 'R33: functions.function_id is not a Uint32Array',
    fail: (p) => (p.functions.function_id = new BigUint64Array(4)),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'R33', table: 'functions', column: 'function_id' }],
  },
  {
    name: 'R34: functions.name is not character',
    fail: (p) => (p.functions.name[2] = null),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'R34', table: 'functions', column: 'name' }],
  },
  {
    name: 'R35: functions.system_name is not character',
    fail: (p) => (p.functions.system_name = new Array(4)),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'R35', table: 'functions', column: 'system_name' }],
  },
  {
    name: 'R36: functions.filename is not character',
    fail: (p) => (p.functions.filename[0] = undefined),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'R36', table: 'functions', column: 'filename' }],
  },
  {
    name: 'R37: functions.start_line is not a Float64Array',
    fail: (p) => (p.functions.start_line = Int32Array.from(p.functions.start_line)),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'R37', table: 'functions', column: 'start_line' }],
  },
  {
    name: 'profkit.schema: a dotted model column has the wrong type (ids above 2^32-1 impossible)',
    fail: (p) => (p.locations['.mapping_id'] = Float64Array.from([1, 1, 2 ** 32, 0])),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'profkit.schema', table: 'locations', column: '.mapping_id' }],
  },
  {
    name: 'profkit.schema: a column of a profkit table is missing',
    fail: (p) => delete p['.inline_lines'].column,
    expect: [{ code: 'SCHEMA_MISSING_COLUMN', rule: 'profkit.schema', table: '.inline_lines', column: 'column' }],
  },
  {
    name: 'profkit.schema: columns of a profkit table differ in length',
    fail: (p) => p['.mappings'].build_id.pop(),
    expect: [{ code: 'SCHEMA_COLUMN_LENGTH', rule: 'profkit.schema', table: '.mappings', column: 'build_id' }],
  },
  {
    name: 'profkit.schema: an extension column of a table has the wrong length',
    fail: (p) => (p.functions['.file_id'] = new Uint32Array(3)),
    expect: [{ code: 'SCHEMA_COLUMN_LENGTH', rule: 'profkit.schema', table: 'functions', column: '.file_id' }],
    pass: (p) => (p.functions['.file_id'] = new Uint32Array(4)),
  },
  {
    name: 'profkit.schema: an extension column of a table is not a column',
    fail: (p) => (p.functions['.file_id'] = { a: 1 }),
    expect: [{ code: 'SCHEMA_COLUMN_TYPE', rule: 'profkit.schema', table: 'functions', column: '.file_id' }],
  },
  {
    name: 'profkit.csr: stack offsets do not have rows + 1 entries',
    fail: (p) => (p.samples.locations.offsets = Uint32Array.of(0, 2, 4, 5)),
    expect: [{ code: 'SCHEMA_CSR_SHAPE', rule: 'profkit.csr', table: 'samples', column: 'locations.offsets' }],
  },
  {
    name: 'profkit.csr: stack offsets do not end at the number of stack entries',
    fail: (p) => (p.samples.locations.offsets[4] = 4),
    expect: [{ code: 'SCHEMA_CSR_SHAPE', rule: 'profkit.csr', table: 'samples', column: 'locations.offsets' }],
  },
  {
    name: 'profkit.csr: label offsets do not start at 0',
    fail: (p) => (p.samples['.label_offsets'][0] = 1),
    expect: [{ code: 'SCHEMA_CSR_SHAPE', rule: 'profkit.csr', table: 'samples', column: '.label_offsets' }],
  },
  {
    name: 'profkit.csr: inline offsets do not have rows + 1 entries',
    fail: (p) => (p.locations['.inline_offsets'] = Uint32Array.of(0, 0, 1, 1)),
    expect: [{ code: 'SCHEMA_CSR_SHAPE', rule: 'profkit.csr', table: 'locations', column: '.inline_offsets' }],
  },
  {
    name: 'profkit.schema: a profile fact has the wrong type',
    fail: (p) => (p['.profile'].period = 524288),
    expect: [{ code: 'SCHEMA_FACT_TYPE', rule: 'profkit.schema', table: '.profile', column: 'period' }],
    pass: (p) => (p['.profile'].period = -(2n ** 63n)),
  },
  {
    name: 'profkit.schema: a profile fact is out of int64 range',
    fail: (p) => (p['.profile'].time_nanos = 2n ** 63n),
    expect: [{ code: 'SCHEMA_FACT_TYPE', rule: 'profkit.schema', table: '.profile', column: 'time_nanos' }],
    pass: (p) => (p['.profile'].time_nanos = 2n ** 63n - 1n),
  },
  {
    name: 'profkit.schema: an extension per-sample column is not a column',
    fail: (p) => (p['.extensions']['test-ext'].samples.tid = [1, 2, 3, 4]),
    expect: [{ code: 'SCHEMA_EXTENSION_SHAPE', rule: 'profkit.schema', table: '.extensions', column: 'test-ext.samples.tid' }],
    pass: (p) => (p['.extensions']['test-ext'].samples.tid = ['1', '2', '3', '4']),
  },
  {
    name: 'profkit.schema: an extension fact is not JSON-like (a cycle)',
    fail: (p) => {
      const cyc: Mutable = { a: 1 };
      cyc.self = cyc;
      p['.extensions']['test-ext'].facts.cyc = cyc;
    },
    expect: [{ code: 'SCHEMA_EXTENSION_SHAPE', rule: 'profkit.schema', table: '.extensions', column: 'test-ext.facts.cyc' }],
    pass: (p) => {
      const shared = { a: 1 };
      p['.extensions']['test-ext'].facts.twice = [shared, shared];
    },
  },
  {
    name: 'profkit.schema: an extension table has columns of different lengths',
    fail: (p) => p['.extensions']['test-ext'].tables.files.path.push('c.R'),
    expect: [{ code: 'SCHEMA_COLUMN_LENGTH', rule: 'profkit.schema', table: '.extensions', column: 'test-ext.tables.files.path' }],
  },
];

describe('validate: structural rules', () => {
  it.each(structural.map((c) => [c.name, c] as const))('%s', (_name, c) => check(c));

  it('R1: the profile must be an object', () => {
    for (const bad of [null, undefined, 42, 'profile', [], new Uint8Array(3)]) {
      expect(summary(validate(bad))).toEqual([{ code: 'SCHEMA_PROFILE_TYPE', rule: 'R1', table: 'profile', severity: 'error' }]);
    }
    expect(validate(rProfile()).ok).toBe(true);
  });

  it('never throws when any column or fact is replaced by junk, and reports an error', () => {
    const junk: unknown[] = [null, 5, 'x', {}, [1], new Uint8Array(1), new Float64Array([Number.NaN]), Symbol('s'), () => 1, 10n];
    const paths: string[][] = [];
    const base = richProfile() as Mutable;
    for (const table of Object.keys(base)) {
      paths.push([table]);
      for (const col of Object.keys(base[table])) {
        paths.push([table, col]);
        const v = base[table][col];
        if (v && typeof v === 'object' && !ArrayBuffer.isView(v)) for (const k of Object.keys(v)) paths.push([table, col, k]);
      }
    }
    expect(paths.length).toBeGreaterThan(60);
    const failures: string[] = [];
    for (const path of paths) {
      for (const j of junk) {
        const p = richProfile() as Mutable;
        let o = p;
        for (const k of path.slice(0, -1)) o = o[k];
        o[path[path.length - 1]!] = j;
        let r: ValidationResult | undefined;
        expect(() => validate(p, { mode: 'strict-r' }), path.join('.')).not.toThrow();
        expect(() => (r = validate(p)), path.join('.')).not.toThrow();
        // Junk of the original's own type can be valid (a string in a string column, a bigint
        // fact, an empty extension); everything else must be reported.
        let orig = base;
        for (const k of path) orig = orig[k];
        const sameType = (typeof j === typeof orig && typeof j !== 'object') || (path[0] === '.extensions' && j !== null && Object.getPrototypeOf(j) === Object.prototype);
        if (!sameType && r!.errorCount === 0) failures.push(`${path.join('.')} = ${String(j)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('reports every missing table of an empty object, and never throws on junk', () => {
    const r = validate({});
    expect(r.problems.map((p) => p.table)).toEqual(['meta', 'sample_types', 'samples', 'locations', 'functions', '.inline_lines', '.mappings', '.labels', '.profile', '.extensions']);
    expect(new Set(r.problems.map((p) => p.code))).toEqual(new Set(['SCHEMA_MISSING_TABLE']));
    const junk = { meta: { key: 1 }, samples: { locations: 5 }, locations: [], functions: null, '.profile': { comments: [1] }, '.extensions': { x: 1 } };
    expect(() => validate(junk)).not.toThrow();
    expect(validate(junk).ok).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// R's value and reference rules.

const rRules: Case[] = [
  {
    name: 'R8 (strict-r): meta has more than one row',
    base: rProfile,
    mode: 'strict-r',
    fail: (p) => {
      p.meta.key.push('producer');
      p.meta.value.push('profkit');
    },
    expect: [
      { code: 'R8_META_ONE_ROW', rule: 'R8', table: 'meta' },
      { code: 'R9_META_KEY_VERSION', rule: 'R9', table: 'meta', column: 'key', row: 1 },
      // R parses every meta value as a version.
      { code: 'R10_META_VERSION_PARSE', rule: 'R10', table: 'meta', column: 'value', row: 1 },
    ],
  },
  {
    name: 'R8 does not apply in profkit mode: extra meta rows are allowed',
    base: rProfile,
    fail: (p) => {
      p.meta.key.push('version');
      p.meta.value.push('1.0');
    },
    expect: [{ code: 'PROFKIT_META_DUPLICATE_KEY', rule: 'profkit.meta.keys', table: 'meta', column: 'key', row: 1 }],
    pass: (p) => {
      p.meta.key.push('producer');
      p.meta.value.push('profkit');
    },
  },
  {
    name: 'R9 (profkit): no meta row has key version',
    fail: (p) => (p.meta.key[0] = 'Version'),
    expect: [{ code: 'R9_META_KEY_VERSION', rule: 'R9', table: 'meta', column: 'key' }],
  },
  {
    name: 'R9 (strict-r): the meta row is not version',
    base: rProfile,
    mode: 'strict-r',
    fail: (p) => (p.meta.key[0] = 'format'),
    expect: [{ code: 'R9_META_KEY_VERSION', rule: 'R9', table: 'meta', column: 'key', row: 0 }],
  },
  {
    name: 'R10: the version does not parse like package_version (one component)',
    fail: (p) => (p.meta.value[0] = '1'),
    expect: [{ code: 'R10_META_VERSION_PARSE', rule: 'R10', table: 'meta', column: 'value', row: 0 }],
    pass: (p) => (p.meta.value[0] = '1-0'),
  },
  {
    name: 'R10: the version does not parse like package_version (trailing letter)',
    base: rProfile,
    mode: 'strict-r',
    fail: (p) => (p.meta.value[0] = '1.0a'),
    expect: [{ code: 'R10_META_VERSION_PARSE', rule: 'R10', table: 'meta', column: 'value', row: 0 }],
    pass: (p) => (p.meta.value[0] = '10.2.3'),
  },
  {
    name: 'R14 (strict-r): more than one sample type',
    base: rProfile,
    mode: 'strict-r',
    fail: (p) => {
      p.sample_types.type.push('samples');
      p.sample_types.unit.push('count');
      p.samples['.values'].push(p.samples.value.slice());
    },
    expect: [{ code: 'R14_SAMPLE_TYPES_ONE_ROW', rule: 'R14', table: 'sample_types' }],
  },
  {
    name: 'R15 (strict-r): the sample type is not samples',
    base: rProfile,
    mode: 'strict-r',
    fail: (p) => (p.sample_types.type[0] = 'cpu'),
    expect: [{ code: 'R15_SAMPLE_TYPE_SAMPLES', rule: 'R15', table: 'sample_types', column: 'type', row: 0 }],
  },
  {
    name: 'R16 (strict-r): the sample unit is not count',
    base: rProfile,
    mode: 'strict-r',
    fail: (p) => (p.sample_types.unit[0] = 'nanoseconds'),
    expect: [{ code: 'R16_SAMPLE_UNIT_COUNT', rule: 'R16', table: 'sample_types', column: 'unit', row: 0 }],
  },
  {
    name: 'R18 (strict-r): a value does not fit an R integer',
    base: rProfile,
    mode: 'strict-r',
    fail: (p) => (p.samples.value[2] = BigInt(INT32_MAX) + 1n),
    expect: [{ code: 'R18_SAMPLE_VALUE_INT32', rule: 'R18', table: 'samples', column: 'value', row: 2 }],
    pass: (p) => (p.samples.value[2] = BigInt(INT32_MAX)),
  },
  {
    name: 'R20 (strict-r): a value is not > 0',
    base: rProfile,
    mode: 'strict-r',
    fail: (p) => {
      p.samples.value[1] = 0n;
      p.samples.value[3] = -(2n ** 31n);
    },
    expect: [
      { code: 'R20_SAMPLE_VALUE_POSITIVE', rule: 'R20', table: 'samples', column: 'value', row: 1 },
      { code: 'R20_SAMPLE_VALUE_POSITIVE', rule: 'R20', table: 'samples', column: 'value', row: 3 },
    ],
    pass: (p) => (p.samples.value[1] = 1n),
  },
  {
    name: 'R24: a stack refers to a location that does not exist',
    fail: (p) => (p.samples.locations.location_id[3] = 99),
    expect: [{ code: 'R24_SAMPLE_LOCATION_EXISTS', rule: 'R24', table: 'samples', column: 'locations.location_id', row: 1 }],
    pass: (p) => (p.samples.locations.location_id[3] = 4),
  },
  {
    name: 'R29: duplicate location ids',
    fail: (p) => (p.locations.location_id[3] = 2),
    expect: [{ code: 'R29_LOCATION_ID_UNIQUE', rule: 'R29', table: 'locations', column: 'location_id', row: 3 }],
    pass: (p) => (p.locations.location_id[3] = 40),
  },
  {
    name: 'R30: a location refers to a function that does not exist',
    fail: (p) => (p.locations.function_id[3] = 9),
    expect: [{ code: 'R30_LOCATION_FUNCTION_EXISTS', rule: 'R30', table: 'locations', column: 'function_id', row: 3 }],
    pass: (p) => (p.locations.function_id[3] = 0),
  },
  {
    name: 'R31: a negative location line',
    fail: (p) => (p.locations.line[0] = -1),
    expect: [{ code: 'R31_LOCATION_LINE_NONNEGATIVE', rule: 'R31', table: 'locations', column: 'line', row: 0 }],
    pass: (p) => (p.locations.line[0] = 0),
  },
  {
    name: 'R38: duplicate function ids',
    fail: (p) => (p.functions.function_id[3] = 1),
    expect: [{ code: 'R38_FUNCTION_ID_UNIQUE', rule: 'R38', table: 'functions', column: 'function_id', row: 3 }],
    pass: (p) => (p.functions.function_id[3] = 4000),
  },
  {
    name: 'R38: duplicate function ids among sparse ids (Map lookup)',
    fail: (p) => {
      p.functions.function_id[2] = 2 ** 32 - 1;
      p.functions.function_id[3] = 2 ** 32 - 1;
      p.locations.function_id[1] = 2 ** 32 - 1;
      p['.inline_lines'].function_id[0] = 4e9;
    },
    expect: [
      { code: 'R38_FUNCTION_ID_UNIQUE', rule: 'R38', table: 'functions', column: 'function_id', row: 3 },
      { code: 'PPROF_LINE_FUNCTION_EXISTS', rule: 'pprof.CheckValid.9', table: '.inline_lines', column: 'function_id', row: 0 },
    ],
    pass: (p) => {
      p.functions.function_id[2] = 2 ** 32 - 1;
      p.locations.function_id[1] = 2 ** 32 - 1;
    },
  },
  {
    name: 'R39: an empty function name',
    fail: (p) => (p.functions.name[1] = ''),
    expect: [{ code: 'R39_FUNCTION_NAME_NONEMPTY', rule: 'R39', table: 'functions', column: 'name', row: 1 }],
    pass: (p) => (p.functions.name[1] = ' '),
  },
  {
    name: 'R40: an empty system name',
    fail: (p) => (p.functions.system_name[2] = ''),
    expect: [{ code: 'R40_FUNCTION_SYSTEM_NAME_NONEMPTY', rule: 'R40', table: 'functions', column: 'system_name', row: 2 }],
  },
  {
    name: 'R41: a negative start line',
    fail: (p) => (p.functions.start_line[1] = -10),
    expect: [{ code: 'R41_FUNCTION_START_LINE_NONNEGATIVE', rule: 'R41', table: 'functions', column: 'start_line', row: 1 }],
    pass: (p) => (p.functions.start_line[1] = 0),
  },
  {
    name: 'R22 (strict-r): a stack location id does not fit an R integer',
    base: rProfile,
    mode: 'strict-r',
    fail: (p) => {
      p.locations.location_id[1] = INT32_MAX + 1; // location g, used by samples 0 and 1
      p.samples.locations.location_id[1] = INT32_MAX + 1;
      p.samples.locations.location_id[2] = INT32_MAX + 1;
    },
    expect: [
      { code: 'STRICT_R_INT32', rule: 'R26', table: 'locations', column: 'location_id', row: 1 },
      { code: 'STRICT_R_INT32', rule: 'R22', table: 'samples', column: 'locations.location_id', row: 0 },
      { code: 'STRICT_R_INT32', rule: 'R22', table: 'samples', column: 'locations.location_id', row: 1 },
    ],
    pass: (p) => {
      p.locations.location_id[1] = INT32_MAX;
      p.samples.locations.location_id[1] = INT32_MAX;
      p.samples.locations.location_id[2] = INT32_MAX;
    },
  },
  {
    name: 'R27/R33 (strict-r): a function id does not fit an R integer',
    base: rProfile,
    mode: 'strict-r',
    fail: (p) => {
      p.functions.function_id[2] = 2 ** 32 - 1;
      p.locations.function_id[3] = 2 ** 32 - 1;
    },
    expect: [
      { code: 'STRICT_R_INT32', rule: 'R33', table: 'functions', column: 'function_id', row: 2 },
      { code: 'STRICT_R_INT32', rule: 'R27', table: 'locations', column: 'function_id', row: 3 },
    ],
  },
  {
    name: 'R28/R37 (strict-r): lines that do not fit an R integer',
    base: rProfile,
    mode: 'strict-r',
    fail: (p) => {
      p.locations.line[0] = 2 ** 31;
      p.functions.start_line[0] = 2 ** 40;
    },
    expect: [
      { code: 'STRICT_R_INT32', rule: 'R37', table: 'functions', column: 'start_line', row: 0 },
      { code: 'STRICT_R_INT32', rule: 'R28', table: 'locations', column: 'line', row: 0 },
    ],
    pass: (p) => (p.locations.line[0] = INT32_MAX),
  },
  {
    name: 'R28/R37 do not apply in profkit mode: lines up to 2^53-1',
    base: rProfile,
    fail: (p) => (p.locations.line[0] = 2 ** 53),
    expect: [{ code: 'PROFKIT_NOT_SAFE_INTEGER', rule: 'profkit.integer', table: 'locations', column: 'line', row: 0 }],
    pass: (p) => {
      p.locations.line[0] = 2 ** 53 - 1;
      p.functions.start_line[0] = 2 ** 40;
    },
  },
];

describe("validate: R's value and reference rules", () => {
  it.each(rRules.map((c) => [c.name, c] as const))('%s', (_name, c) => check(c));

  it('R20 does not apply in profkit mode: zero, negative and extreme int64 values are fine', () => {
    const p = rProfile();
    p.samples.value[0] = 0n;
    p.samples.value[1] = -(2n ** 63n);
    p.samples.value[2] = 2n ** 63n - 1n;
    expect(validate(p).problems).toEqual([]);
    expect(summary(validate(p, { mode: 'strict-r' })).map((e) => [e.code, e.row])).toEqual([
      ['R20_SAMPLE_VALUE_POSITIVE', 0],
      ['R20_SAMPLE_VALUE_POSITIVE', 1],
      ['R18_SAMPLE_VALUE_INT32', 2],
    ]);
  });

  it("R10 follows R's package_version()", () => {
    for (const ok of ['1.0', '1-0', '0.0', '1.0.4.9017', '2024-01', '007.1']) expect(isRPackageVersion(ok)).toBe(true);
    for (const bad of ['1', '2', '1.0a', ' 1.0', '1.0 ', 'v1.0', '1..0', '1.', '.1', '', '١.٠', 'abc']) expect(isRPackageVersion(bad)).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// pprof CheckValid rules.

const pprofRules: Case[] = [
  {
    name: 'CheckValid.1: samples without sample types',
    base: rProfile,
    fail: (p) => {
      p.sample_types = { type: [], unit: [] };
      p.samples['.values'] = [];
    },
    expect: [{ code: 'PPROF_MISSING_SAMPLE_TYPE', rule: 'pprof.CheckValid.1', table: 'sample_types' }],
    pass: (p) => {
      p.sample_types = { type: [], unit: [] };
      p.samples = { value: new BigInt64Array(0), locations: { offsets: new Uint32Array(1), location_id: new Uint32Array(0) }, '.values': [] };
    },
  },
  {
    name: 'CheckValid.3: fewer value columns than sample types',
    fail: (p) => p.samples['.values'].pop(),
    expect: [{ code: 'PPROF_VALUES_COUNT', rule: 'pprof.CheckValid.3', table: 'samples', column: '.values' }],
  },
  {
    name: 'CheckValid.3: a value column shorter than the samples',
    fail: (p) => (p.samples['.values'][1] = p.samples['.values'][1].slice(0, 3)),
    expect: [{ code: 'PPROF_VALUES_COUNT', rule: 'pprof.CheckValid.3', table: 'samples', column: '.values[1]' }],
  },
  {
    name: 'CheckValid.4: a stack holds location id 0',
    fail: (p) => (p.samples.locations.location_id[4] = 0),
    expect: [{ code: 'PPROF_SAMPLE_LOCATION_ZERO', rule: 'pprof.CheckValid.4', table: 'samples', column: 'locations.location_id', row: 3 }],
  },
  {
    name: 'CheckValid.5: a mapping id is 0',
    fail: (p) => (p['.mappings'].mapping_id[1] = 0),
    expect: [{ code: 'PPROF_MAPPING_ID_ZERO', rule: 'pprof.CheckValid.5', table: '.mappings', column: 'mapping_id', row: 1 }],
  },
  {
    name: 'CheckValid.5: duplicate mapping ids',
    fail: (p) => (p['.mappings'].mapping_id[1] = 1),
    expect: [{ code: 'PPROF_DUPLICATE_MAPPING_ID', rule: 'pprof.CheckValid.5', table: '.mappings', column: 'mapping_id', row: 1 }],
    pass: (p) => (p['.mappings'].mapping_id[1] = 2 ** 32 - 1),
  },
  {
    name: 'CheckValid.6: a function id is 0',
    fail: (p) => (p.functions.function_id[3] = 0),
    expect: [{ code: 'PPROF_FUNCTION_ID_ZERO', rule: 'pprof.CheckValid.6', table: 'functions', column: 'function_id', row: 3 }],
  },
  {
    name: 'CheckValid.7: a location id is 0',
    fail: (p) => (p.locations.location_id[3] = 0),
    expect: [{ code: 'PPROF_LOCATION_ID_ZERO', rule: 'pprof.CheckValid.7', table: 'locations', column: 'location_id', row: 3 }],
  },
  {
    name: 'CheckValid.8: a location refers to a mapping that does not exist',
    fail: (p) => (p.locations['.mapping_id'][2] = 7),
    expect: [{ code: 'PPROF_LOCATION_MAPPING_EXISTS', rule: 'pprof.CheckValid.8', table: 'locations', column: '.mapping_id', row: 2 }],
    pass: (p) => (p.locations['.mapping_id'][2] = 0),
  },
  {
    name: 'CheckValid.9: an inline line has function id 0',
    fail: (p) => (p['.inline_lines'].function_id[0] = 0),
    expect: [{ code: 'PPROF_LINE_FUNCTION_ZERO', rule: 'pprof.CheckValid.9', table: '.inline_lines', column: 'function_id', row: 0 }],
  },
  {
    name: 'CheckValid.9: an inline line refers to a function that does not exist',
    fail: (p) => (p['.inline_lines'].function_id[0] = 5),
    expect: [{ code: 'PPROF_LINE_FUNCTION_EXISTS', rule: 'pprof.CheckValid.9', table: '.inline_lines', column: 'function_id', row: 0 }],
    pass: (p) => (p['.inline_lines'].function_id[0] = 4),
  },
];

describe('validate: pprof CheckValid rules', () => {
  it.each(pprofRules.map((c) => [c.name, c] as const))('%s', (_name, c) => check(c));
});

// ---------------------------------------------------------------------------------------------
// profkit's own rules.

const profkitRules: Case[] = [
  {
    name: 'profkit.values.alias: samples.value differs from .values[0]',
    fail: (p) => {
      p.samples.value = p.samples.value.slice();
      p.samples.value[2] = 5n;
    },
    expect: [{ code: 'PROFKIT_VALUES_ALIAS', rule: 'profkit.values.alias', table: 'samples', column: 'value', row: 2 }],
    pass: (p) => (p.samples.value = p.samples.value.slice()),
  },
  {
    name: 'profkit.csr: stack offsets decrease',
    fail: (p) => (p.samples.locations.offsets[1] = 5),
    expect: [{ code: 'PROFKIT_CSR_NOT_MONOTONE', rule: 'profkit.csr', table: 'samples', column: 'locations.offsets', row: 1 }],
    pass: (p) => (p.samples.locations.offsets[1] = 4) /* sample 0 takes both stacks, sample 1 none */,
  },
  {
    name: 'profkit.csr: label offsets decrease',
    fail: (p) => (p.samples['.label_offsets'][2] = 1) /* sample 1 would span labels 2..1 */,
    expect: [{ code: 'PROFKIT_CSR_NOT_MONOTONE', rule: 'profkit.csr', table: 'samples', column: '.label_offsets', row: 1 }],
  },
  {
    name: 'profkit.csr: label offsets do not end at the number of labels',
    fail: (p) => p['.labels'].key.push('x') && p['.labels'].str.push('y') && p['.labels'].num_unit.push('') && (p['.labels'].num = BigInt64Array.of(...p['.labels'].num, 0n)) && (p['.labels'].is_num = Uint8Array.of(...p['.labels'].is_num, 0)),
    expect: [{ code: 'SCHEMA_CSR_SHAPE', rule: 'profkit.csr', table: 'samples', column: '.label_offsets' }],
  },
  {
    name: 'profkit.csr: labels exist but samples have no label offsets',
    fail: (p) => delete p.samples['.label_offsets'],
    expect: [{ code: 'SCHEMA_CSR_SHAPE', rule: 'profkit.csr', table: 'samples', column: '.label_offsets' }],
    pass: (p) => {
      delete p.samples['.label_offsets'];
      p['.labels'] = { key: [], str: [], num: new BigInt64Array(0), num_unit: [], is_num: new Uint8Array(0) };
    },
  },
  {
    name: 'profkit.csr: inline offsets decrease',
    fail: (p) => (p.locations['.inline_offsets'][3] = 0) /* location 2 would span inline lines 1..0 */,
    expect: [{ code: 'PROFKIT_CSR_NOT_MONOTONE', rule: 'profkit.csr', table: 'locations', column: '.inline_offsets', row: 2 }],
  },
  {
    name: 'profkit.csr: inline offsets do not end at the number of inline lines',
    fail: (p) => (p.locations['.inline_offsets'][4] = 0),
    expect: [
      { code: 'PROFKIT_CSR_NOT_MONOTONE', rule: 'profkit.csr', table: 'locations', column: '.inline_offsets', row: 3 },
      { code: 'SCHEMA_CSR_SHAPE', rule: 'profkit.csr', table: 'locations', column: '.inline_offsets' },
    ],
  },
  {
    name: 'profkit.inline: a location has inline lines but no innermost line',
    fail: (p) => (p.locations.function_id[1] = 0),
    expect: [{ code: 'PROFKIT_INLINE_WITHOUT_LINE', rule: 'profkit.inline', table: 'locations', column: '.inline_offsets', row: 1 }],
  },
  {
    name: 'profkit.integer: a line is not an integer',
    fail: (p) => {
      p.locations.line[1] = 1.5;
      p.locations['.column'][2] = Number.NaN;
      p['.inline_lines'].line[0] = Number.POSITIVE_INFINITY;
      p.functions.start_line[0] = 2 ** 53;
    },
    expect: [
      { code: 'PROFKIT_NOT_SAFE_INTEGER', rule: 'profkit.integer', table: 'functions', column: 'start_line', row: 0 },
      { code: 'PROFKIT_NOT_SAFE_INTEGER', rule: 'profkit.integer', table: 'locations', column: 'line', row: 1 },
      { code: 'PROFKIT_NOT_SAFE_INTEGER', rule: 'profkit.integer', table: 'locations', column: '.column', row: 2 },
      { code: 'PROFKIT_NOT_SAFE_INTEGER', rule: 'profkit.integer', table: '.inline_lines', column: 'line', row: 0 },
    ],
  },
  {
    name: 'profkit.line: negative columns and inline lines',
    fail: (p) => {
      p.locations['.column'][1] = -1;
      p['.inline_lines'].line[0] = -2;
      p['.inline_lines'].column[0] = -3;
    },
    expect: [
      { code: 'PROFKIT_LINE_NONNEGATIVE', rule: 'profkit.line', table: 'locations', column: '.column', row: 1 },
      { code: 'PROFKIT_LINE_NONNEGATIVE', rule: 'profkit.line', table: '.inline_lines', column: 'line', row: 0 },
      { code: 'PROFKIT_LINE_NONNEGATIVE', rule: 'profkit.line', table: '.inline_lines', column: 'column', row: 0 },
    ],
  },
  {
    name: 'profkit.flag: flags other than 0 and 1',
    fail: (p) => {
      p['.mappings'].has_functions[0] = 2;
      p.locations['.is_folded'][0] = 255;
      p['.labels'].is_num[0] = 3;
    },
    expect: [
      { code: 'PROFKIT_FLAG_NOT_BOOLEAN', rule: 'profkit.flag', table: '.mappings', column: 'has_functions', row: 0 },
      { code: 'PROFKIT_FLAG_NOT_BOOLEAN', rule: 'profkit.flag', table: 'locations', column: '.is_folded', row: 0 },
      { code: 'PROFKIT_FLAG_NOT_BOOLEAN', rule: 'profkit.flag', table: '.labels', column: 'is_num', row: 0 },
    ],
    pass: (p) => (p.locations['.is_folded'][0] = 1),
  },
  {
    name: 'profkit.label.kind: a string label with a number or unit, a numeric label with a string',
    fail: (p) => {
      p['.labels'].num[0] = 5n;
      p['.labels'].num_unit[2] = 'bytes';
      p['.labels'].str[1] = 'x';
    },
    expect: [
      { code: 'PROFKIT_LABEL_KIND', rule: 'profkit.label.kind', table: '.labels', column: 'num', row: 0 },
      { code: 'PROFKIT_LABEL_KIND', rule: 'profkit.label.kind', table: '.labels', column: 'str', row: 1 },
      { code: 'PROFKIT_LABEL_KIND', rule: 'profkit.label.kind', table: '.labels', column: 'num_unit', row: 2 },
    ],
    pass: (p) => (p['.labels'].num[1] = 0n) /* a numeric label may be 0 */,
  },
  {
    name: 'profkit.label.key (warning): a label with an empty key',
    fail: (p) => (p['.labels'].key[2] = ''),
    expect: [{ code: 'PROFKIT_LABEL_EMPTY_KEY', rule: 'profkit.label.key', table: '.labels', column: 'key', row: 2, severity: 'warning' }],
  },
  {
    name: 'profkit.default_sample_type (warning): names no sample type',
    fail: (p) => (p['.profile'].default_sample_type = 'inuse_space'),
    expect: [{ code: 'PROFKIT_DEFAULT_SAMPLE_TYPE_UNKNOWN', rule: 'profkit.default_sample_type', table: '.profile', column: 'default_sample_type', severity: 'warning' }],
    pass: (p) => (p['.profile'].default_sample_type = 'alloc_objects'),
  },
  {
    name: 'profkit.mapping.range (warning): memory_start after memory_limit',
    fail: (p) => (p['.mappings'].memory_start[1] = 0x7f0000200000n),
    expect: [{ code: 'PROFKIT_MAPPING_RANGE', rule: 'profkit.mapping.range', table: '.mappings', column: 'memory_limit', row: 1, severity: 'warning' }],
    pass: (p) => (p['.mappings'].memory_start[1] = 0x7f0000100000n),
  },
  {
    name: 'profkit.address.mapping (warning): an address outside its mapping',
    fail: (p) => (p.locations['.address'][2] = 0x500000n),
    expect: [{ code: 'PROFKIT_ADDRESS_OUTSIDE_MAPPING', rule: 'profkit.address.mapping', table: 'locations', column: '.address', row: 2, severity: 'warning' }],
    pass: (p) => {
      p.locations['.address'][2] = 0x4fffffn;
      // A mapping with an unknown range (limit 0) says nothing about addresses.
      p['.mappings'].memory_start[1] = 0n;
      p['.mappings'].memory_limit[1] = 0n;
      p.locations['.mapping_id'][1] = 2;
    },
  },
  {
    name: 'profkit.extension.samples: a per-sample extension column of the wrong length',
    fail: (p) => (p['.extensions']['test-ext'].samples.tid = new Float64Array(5)),
    expect: [{ code: 'PROFKIT_EXTENSION_SAMPLES_LENGTH', rule: 'profkit.extension.samples', table: '.extensions', column: 'test-ext.samples.tid' }],
    pass: (p) => (p['.extensions'].other = { samples: { gc: new Uint8Array(4) } }),
  },
];

describe("validate: profkit's rules", () => {
  it.each(profkitRules.map((c) => [c.name, c] as const))('%s', (_name, c) => check(c));

  it('reports problems of several tables at once, not just the first', () => {
    const p = richProfile() as Mutable;
    p.functions.name[0] = '';
    p.locations.line[3] = -4;
    p.samples.locations.location_id[0] = 77;
    p['.mappings'].mapping_id[1] = 0;
    expect(summary(validate(p)).map((e) => e.code)).toEqual([
      'R39_FUNCTION_NAME_NONEMPTY',
      'PPROF_MAPPING_ID_ZERO',
      'R31_LOCATION_LINE_NONNEGATIVE',
      'R24_SAMPLE_LOCATION_EXISTS',
    ]);
  });

  it('caps the rows listed per rule and counts the rest', () => {
    const p = rProfile() as Mutable;
    p.functions.name = ['', '', ''];
    const r = validate(p, { maxRowsPerRule: 2 });
    expect(summary(r)).toEqual([
      { code: 'R39_FUNCTION_NAME_NONEMPTY', rule: 'R39', table: 'functions', column: 'name', row: 0, severity: 'error' },
      { code: 'R39_FUNCTION_NAME_NONEMPTY', rule: 'R39', table: 'functions', column: 'name', row: 1, severity: 'error' },
      { code: 'R39_FUNCTION_NAME_NONEMPTY', rule: 'R39', table: 'functions', column: 'name', severity: 'error' },
    ]);
    expect(r.problems[2]!.message).toMatch(/^1 more rows of functions\.name break rule R39/);
    expect(r.errorCount).toBe(3);
    expect(r.omitted).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------

describe('assertValid', () => {
  it('passes valid profiles and profiles with only warnings', () => {
    expect(() => assertValid(rProfile(), 'r.out', { mode: 'strict-r' })).not.toThrow();
    const p = richProfile();
    p['.profile'].default_sample_type = 'nope';
    expect(validate(p).warningCount).toBe(1);
    expect(() => assertValid(p)).not.toThrow();
  });

  it('throws PROFKIT_E_INVALID_PROFILE naming the first problem and the count', () => {
    const p = richProfile() as Mutable;
    p.functions.system_name[1] = '';
    p.locations.function_id[3] = 42;
    p['.profile'].default_sample_type = 'nope';
    try {
      assertValid(p, 'heap.pb.gz');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ProfkitError);
      const err = e as ProfkitError;
      expect(err.code).toBe(ErrorCodes.INVALID_PROFILE);
      expect(err.message).toMatch(/^invalid profile: functions\.system_name row 1: .*\[R40_FUNCTION_SYSTEM_NAME_NONEMPTY, rule R40\] \(and 1 more error\)$/);
      expect(err.message).not.toContain('\n');
      expect(err.detail.file).toBe('heap.pb.gz');
      expect(err.detail.rule).toBe('R40');
      const problems = err.detail.problems as Problem[];
      expect(problems.map((x) => x.code)).toEqual(['PROFKIT_DEFAULT_SAMPLE_TYPE_UNKNOWN', 'R40_FUNCTION_SYSTEM_NAME_NONEMPTY', 'R30_LOCATION_FUNCTION_EXISTS']);
      expect(err.describe()).toMatch(/^heap\.pb\.gz: invalid profile: /);
    }
  });

  it('applies the mode', () => {
    expect(() => assertValid(richProfile())).not.toThrow();
    expect(() => assertValid(richProfile(), undefined, { mode: 'strict-r' })).toThrow(/R14_SAMPLE_TYPES_ONE_ROW.*\(and 4 more errors\)/);
  });
});

// ---------------------------------------------------------------------------------------------
// Reader proofs (validating once): what a reader proved is skipped only by the one validation
// of its result, straight from it; every rule still fires on a profile changed afterwards.

describe('validate: reader proofs', () => {
  const EVERY_RULE: ProvableRule[] = ['samples.stacks', 'samples.label_offsets', 'locations.ids', 'locations.functions', 'locations.inline', 'inline_lines.functions', 'functions.ids', 'functions.names', 'labels.kind', 'flags'];
  const cases = [...structural, ...rRules, ...pprofRules, ...profkitRules].map((c) => [c.name, c] as const);

  /** The case's base with a proof of every rule by reader `proved`, then broken (in place, mostly) by `c.fail`. */
  function provedThenBroken(c: Case, beforeBreaking?: (p: Mutable) => void): Mutable {
    const p = (c.base ?? richProfile)() as Mutable;
    recordReaderProof(p, 'proved', EVERY_RULE);
    beforeBreaking?.(p);
    c.fail(p);
    return p;
  }

  const full = (c: Case): Expected[] => summary(run(c, c.fail));

  it.each(cases)('%s: reported by a validation that names no reader (a later caller, a write)', (_name, c) => {
    expect(summary(validate(provedThenBroken(c), { mode: c.mode ?? 'profkit' }))).toEqual(full(c));
  });

  it.each(cases)('%s: reported when the validation trusts another reader', (_name, c) => {
    expect(summary(validate(provedThenBroken(c), { mode: c.mode ?? 'profkit', trustReader: 'another' }))).toEqual(full(c));
  });

  it.each(cases)('%s: reported when broken after the reader\'s result was validated once', (_name, c) => {
    const p = provedThenBroken(c, (fresh) => validate(fresh, { trustReader: 'proved' }));
    expect(summary(validate(p, { mode: c.mode ?? 'profkit', trustReader: 'proved' }))).toEqual(full(c));
  });

  it.each(cases)('%s: reported, trusting the reader, when every column was replaced by a copy before breaking it', (_name, c) => {
    const p = provedThenBroken(c, (fresh) => {
      for (const table of Object.values(fresh as Record<string, unknown>)) {
        if (typeof table !== 'object' || table === null || Array.isArray(table)) continue;
        const t = table as Record<string, unknown>;
        for (const [name, col] of Object.entries(t)) {
          if (Array.isArray(col)) t[name] = col.slice();
          else if (ArrayBuffer.isView(col)) t[name] = (col as Uint32Array).slice();
          else if (name === 'locations' && typeof col === 'object' && col !== null) {
            const l = col as { offsets: Uint32Array; location_id: Uint32Array };
            t[name] = { offsets: l.offsets.slice(), location_id: l.location_id.slice() };
          }
        }
      }
      fresh.samples['.values'] = fresh.samples['.values'].map((v: BigInt64Array, k: number) => (k === 0 ? fresh.samples.value : v));
    });
    expect(summary(validate(p, { mode: c.mode ?? 'profkit', trustReader: 'proved' }))).toEqual(full(c));
  });

  it.each(cases.filter(([, c]) => c.mode === 'strict-r'))('%s: reported in strict-r mode even when trusting the reader', (_name, c) => {
    expect(summary(validate(provedThenBroken(c), { mode: 'strict-r', trustReader: 'proved' }))).toEqual(full(c));
  });

  it('a replaced column loses the proof of exactly the rules that read it', () => {
    const p = richProfile() as Mutable;
    recordReaderProof(p, 'proved', EVERY_RULE);
    // In place (the reader vouched for these arrays, and this is the one trusted validation): unseen.
    p.functions.name[0] = '';
    // Replaced: the stacks and R30 read these columns, so their proofs are gone.
    p.samples.locations.location_id = Uint32Array.from(p.samples.locations.location_id, (id: number) => (id === 3 ? 9 : id));
    p.locations.function_id = p.locations.function_id.slice();
    p.locations.function_id[0] = 77;
    expect(summary(validate(p, { trustReader: 'proved' }))).toEqual([
      { code: 'R30_LOCATION_FUNCTION_EXISTS', rule: 'R30', table: 'locations', column: 'function_id', row: 0, severity: 'error' },
      { code: 'R24_SAMPLE_LOCATION_EXISTS', rule: 'R24', table: 'samples', column: 'locations.location_id', row: 1, severity: 'error' },
    ]);
    // The proof served one validation: the next one checks everything.
    expect(summary(validate(p, { trustReader: 'proved' })).map((x) => x.code)).toEqual(['R39_FUNCTION_NAME_NONEMPTY', 'R30_LOCATION_FUNCTION_EXISTS', 'R24_SAMPLE_LOCATION_EXISTS']);
  });

  it('profiles built by ProfileBuilder carry no proof', () => {
    const p = richProfile() as Mutable;
    p.samples.locations.location_id[0] = 99;
    expect(summary(validate(p, { trustReader: 'pprof' })).map((x) => x.code)).toEqual(['R24_SAMPLE_LOCATION_EXISTS']);
  });
});
