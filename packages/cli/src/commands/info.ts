import {
  defaultSampleTypeIndex,
  functionCount,
  locationCount,
  mappingCount,
  sampleCount,
  sampleTypes,
  totalValue,
} from '@profkit/core/node';
import { formatNanos, isoFromNanos, table } from '../output.js';
import type { CliCommand } from '../types.js';
import { READ_OPTION, readOptionsOf } from './shared.js';

export const info: CliCommand = {
  name: 'info',
  summary: 'Summarize a profile: format, sample types and totals, table sizes, time span, top-level facts',
  usage: 'profkit info FILE [--from FORMAT] [--read-option K=V]... [--json]\n\nFILE may be - for stdin.\n\nExample:\n  profkit info cpu.pb.gz',
  options: {
    from: { type: 'string', valueName: 'FORMAT', description: 'read as FORMAT instead of detecting it' },
    ...READ_OPTION,
  },
  positionals: 1,
  json: true,
  async run(ctx) {
    const file = ctx.positionals[0]!;
    const bar = ctx.progress(`reading ${file}`);
    const r = await ctx.registry.read(file, { format: ctx.values.from as string | undefined, options: readOptionsOf(ctx), signal: ctx.signal, onProgress: (d, t) => bar.update(d, t) });
    bar.done();
    const p = r.profile;
    const facts = p['.profile'];
    const types = sampleTypes(p).map((t, i) => ({ type: t.type, unit: t.unit, total: totalValue(p, i) }));
    const def = defaultSampleTypeIndex(p);
    const start = facts.time_nanos !== 0n ? isoFromNanos(facts.time_nanos) : undefined;
    const end = facts.time_nanos !== 0n && facts.duration_nanos !== 0n ? isoFromNanos(facts.time_nanos + facts.duration_nanos) : undefined;
    const summary = {
      file,
      format: r.format,
      adapter: r.adapter,
      gzipped: r.gzipped,
      sampleTypes: types,
      defaultSampleType: def >= 0 ? types[def]!.type : null,
      samples: sampleCount(p),
      locations: locationCount(p),
      functions: functionCount(p),
      mappings: mappingCount(p),
      labels: p['.labels'].key.length,
      periodType: facts.period_type ?? null,
      period: facts.period,
      timeNanos: facts.time_nanos,
      durationNanos: facts.duration_nanos,
      timeSpan: start ? { start, end: end ?? null } : null,
      comments: facts.comments,
      dropFrames: facts.drop_frames,
      keepFrames: facts.keep_frames,
      docUrl: facts.doc_url,
      extensions: Object.keys(p['.extensions']).sort(),
      warnings: r.warnings,
    };
    if (ctx.json) {
      ctx.out.document('info', summary);
      return 0;
    }
    const o = ctx.out;
    o.line(`file        ${file}${r.gzipped ? ' (gzip)' : ''}`);
    o.line(`format      ${r.format} (adapter ${r.adapter})`);
    o.line(`samples     ${summary.samples}`);
    o.line('sample types');
    for (const l of table(types.map((t, i) => [`${t.type}/${t.unit}`, `total ${t.total}`, i === def ? '(default)' : '']), '  ')) o.line(l);
    o.line(`locations   ${summary.locations}`);
    o.line(`functions   ${summary.functions}`);
    o.line(`mappings    ${summary.mappings}`);
    if (summary.labels) o.line(`labels      ${summary.labels}`);
    o.line(`period      ${facts.period_type ? `${facts.period} ${facts.period_type.type}/${facts.period_type.unit}` : facts.period !== 0n ? String(facts.period) : 'not set'}`);
    o.line(`time        ${start ?? 'unknown'}`);
    o.line(`duration    ${facts.duration_nanos !== 0n ? formatNanos(facts.duration_nanos) : 'unknown'}`);
    if (start && end) o.line(`time span   ${start} .. ${end}`);
    for (const c of facts.comments) o.line(`comment     ${c}`);
    if (facts.drop_frames) o.line(`drop frames ${facts.drop_frames}`);
    if (facts.keep_frames) o.line(`keep frames ${facts.keep_frames}`);
    if (facts.doc_url) o.line(`doc url     ${facts.doc_url}`);
    if (summary.extensions.length) o.line(`extensions  ${summary.extensions.join(', ')}`);
    if (r.warnings.length) {
      o.line(`warnings    ${r.warnings.length}`);
      for (const w of r.warnings) o.line(`  ${w.message} [${w.code}]`);
    }
    return 0;
  },
};
