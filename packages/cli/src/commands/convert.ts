import { ErrorCodes, ProfkitError, missingTransformError, type TransformValues } from '@profkit/core/node';
import type { CliCommand } from '../types.js';
import { parseFormatOptions, stringOption } from './shared.js';
import { ANNOTATION_OPTIONS, withAddedComment, withBuildIdOverride } from './profile-annotations.js';

/**
 * convert's options passed to the `symbolize` transform (contributed by an adapter, normally
 * @profkit/symbolize): convert option → transform option.
 */
const SYMBOLIZE_OPTIONS: Record<string, string> = { binary: 'binary', 'search-path': 'search-path', 'symbol-server': 'remote', 'symbolize-mode': 'mode' };

export const convert: CliCommand = {
  name: 'convert',
  summary: 'Convert a profile between formats (output format by --to or by the output extension)',
  usage:
    'profkit convert IN OUT [--from FORMAT] [--to FORMAT] [--read-option K=V]... [--write-option K=V]...\n' +
    '                       [--symbolize [--binary PATH] [--search-path DIRS] [--symbol-server URL] [--symbolize-mode full|names]]\n' +
    '                       [--source-maps]\n\n' +
    'IN may be - for stdin and OUT - for stdout (then --to is required).\nThe output is written atomically and never overwrites IN.\n' +
    '--symbolize applies the symbolize transform (from @profkit/symbolize) between reading and writing:\n' +
    'addresses become functions, files and lines from local binaries, and what is left is named by\n' +
    '--symbol-server (a /pprof/symbol server) when given.\n' +
    '--source-maps applies the source-maps transform (from @profkit/v8): generated JavaScript positions\n' +
    'become original ones through the scripts\' source maps (inline, or .map files beside them).\n\n' +
    'Examples:\n  profkit convert cpu.pb.gz cpu.speedscope.json\n  cat cpu.pb.gz | profkit convert - - --to speedscope > cpu.json\n' +
    '  profkit convert prog.cpu prog.pb.gz --symbolize --binary ./prog\n' +
    '  profkit convert app.cpuprofile app.pb.gz --source-maps',
  options: {
    from: { type: 'string', valueName: 'FORMAT', description: 'read IN as FORMAT instead of detecting it' },
    to: { type: 'string', valueName: 'FORMAT', description: 'write OUT as FORMAT instead of choosing by its extension' },
    symbolize: { type: 'boolean', description: 'apply the symbolize transform between read and write (needs @profkit/symbolize)' },
    binary: { type: 'string', valueName: 'PATH', description: 'with --symbolize: the main binary (overrides the first mapping\'s file)' },
    'search-path': { type: 'string', valueName: 'DIRS', description: 'with --symbolize: directories to search for binaries, separated by ":"' },
    'symbol-server': { type: 'string', valueName: 'URL', description: 'with --symbolize: profile or symbol URL of a /pprof/symbol server, for what local symbolization left' },
    'symbolize-mode': { type: 'string', valueName: 'MODE', description: 'with --symbolize: full (functions, files, lines; default) or names' },
    'source-maps': { type: 'boolean', description: 'apply the source-maps transform between read and write: JavaScript positions → original sources (needs @profkit/v8)' },
    'read-option': { type: 'string', multiple: true, valueName: 'KEY=VALUE', description: "an option of the input format's reader (see docs/formats/<format>.md), e.g. aggregate=true" },
    'write-option': { type: 'string', multiple: true, valueName: 'KEY=VALUE', description: "an option of the output format's writer, e.g. compress=false or append=true" },
    ...ANNOTATION_OPTIONS,
  },
  positionals: 2,
  json: true,
  async run(ctx) {
    const [input, output] = ctx.positionals as [string, string];
    const symbolize = ctx.values.symbolize === true;
    const sourceMaps = ctx.values['source-maps'] === true;
    const transformValues: TransformValues = {};
    for (const [opt, to] of Object.entries(SYMBOLIZE_OPTIONS)) {
      const v = ctx.values[opt];
      if (v === undefined) continue;
      if (!symbolize) throw new ProfkitError(ErrorCodes.USAGE, `--${opt} needs --symbolize (see \`profkit help convert\`)`, { option: opt, rule: 'command-line usage' });
      transformValues[to] = v;
    }
    // Fail on the output side (unknown extension, missing adapter) and on a missing transform
    // before reading a large input.
    const writer = ctx.registry.writerFor(output, ctx.values.to as string | undefined);
    // Transforms of lazily loaded adapters are known once their modules are imported.
    if ((symbolize || sourceMaps) && ctx.registry.hasLazyAdapters()) await ctx.registry.loadLazyAdapters();
    for (const [wanted, name] of [[symbolize, 'symbolize'], [sourceMaps, 'source-maps']] as const) {
      if (wanted && !ctx.registry.transforms().some((t) => t.transform.name === name)) {
        throw missingTransformError(name, ctx.registry.transforms().map((t) => t.transform.name), ctx.registry.unloadedPackages);
      }
    }
    const bar = ctx.progress(`reading ${input}`);
    const readOptions = parseFormatOptions(ctx.values['read-option'], 'read-option');
    const writeOptions = parseFormatOptions(ctx.values['write-option'], 'write-option');
    // The write is known before the read: a reader may start on it (pprof to pprof: deflating
    // the bytes read while decoding them). Not before a transform, which takes its own time, nor
    // when --add-comment or --buildid changes the profile: its encoding differs, a deflating
    // ahead would be a second core's work in vain (200k samples: +0.5 s CPU, +35 MB).
    const changesProfile = !!stringOption(ctx, 'add-comment') || !!stringOption(ctx, 'buildid');
    const plannedWrite = symbolize || sourceMaps || changesProfile ? undefined : { adapter: writer.adapter.name, format: writer.format.id, fileName: output, options: writeOptions };
    const r = await ctx.registry.read(input, { format: ctx.values.from as string | undefined, options: readOptions, signal: ctx.signal, onProgress: (d, t) => bar.update(d, t), ...(plannedWrite ? { plannedWrite } : {}) });
    bar.done();
    let profile = withBuildIdOverride(ctx, r.profile);
    const warnings = [...r.warnings];
    let transformedBy: string | undefined;
    if (symbolize) {
      const t = await ctx.registry.transform('symbolize', profile, {
        values: transformValues,
        stderr: ctx.stderr,
        signal: ctx.signal,
        verbose: ctx.verbose,
        quiet: ctx.quiet || ctx.json,
      });
      profile = t.profile;
      warnings.push(...t.warnings);
      transformedBy = t.adapter;
    }
    if (sourceMaps) {
      const t = await ctx.registry.transform('source-maps', profile, { values: {}, stderr: ctx.stderr, signal: ctx.signal, verbose: ctx.verbose, quiet: ctx.quiet || ctx.json });
      profile = t.profile;
      warnings.push(...t.warnings);
    }
    profile = withAddedComment(ctx, profile);
    const wbar = ctx.progress(`writing ${output}`);
    const w = await ctx.registry.write(profile, output, {
      format: ctx.values.to as string | undefined,
      inputs: [input],
      options: writeOptions,
      signal: ctx.signal,
      onProgress: (d, t) => wbar.update(d, t),
      // The read already validated this very profile (its warnings are in `warnings`); only a
      // transformed profile (--symbolize, --source-maps) is new to the validator. Validating twice
      // cost 5–10 % of a convert and listed every validation warning twice.
      validate: symbolize || sourceMaps,
    });
    wbar.done();
    warnings.push(...w.warnings);
    if (ctx.json && output !== '-') {
      ctx.out.document('convert', { input, output, from: r.format, to: w.format, ...(transformedBy || sourceMaps ? { transforms: [...(transformedBy ? ['symbolize'] : []), ...(sourceMaps ? ['source-maps'] : [])] } : {}), warnings });
      return 0;
    }
    ctx.out.warnings(warnings);
    if (output !== '-' && !ctx.quiet) ctx.out.line(`${input} (${r.format}) -> ${output} (${w.format})${transformedBy ? ' symbolized' : ''}${sourceMaps ? ' source-mapped' : ''}`);
    return 0;
  },
};
