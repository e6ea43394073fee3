/**
 * Transforms: profile → profile steps an adapter contributes (e.g. `symbolize` from
 * `@profkit/symbolize`), applied by name between read and write (`profkit convert --symbolize`,
 * `profkit fetch --symbolize local`) without the CLI knowing what they do.
 *
 * A transform is listed in an adapter's optional `transforms` field (adapter contract v1: an
 * optional field, so `ADAPTER_API_VERSION` does not change). The registry refuses two
 * transforms of the same name (`registry.transforms()` lists them, `registry.transform()` runs
 * one). When a first-party transform is not installed, the error names the `npm install` command.
 */

import type { CommandOption, OutputStream } from './adapter.js';
import { ErrorCodes, ProfkitError, isProfkitError, type Warning } from './errors.js';
import type { ReadLimits } from './limits.js';
import type { Profile } from './model.js';
import * as s from './shape.js';
import type { PlatformAbortSignal } from './web-types.js';

/** Option values handed to a transform (the shape of node:util `parseArgs` values). */
export type TransformValues = Record<string, string | boolean | string[] | undefined>;

/** What a transform receives besides the profile. */
export interface TransformContext {
  /** Option values, keyed by the transform's option names. */
  values: TransformValues;
  /** Where to report progress or per-item notes for people (not warnings: return those). */
  stderr: OutputStream;
  signal: PlatformAbortSignal;
  verbose: boolean;
  /** The user asked for no notes (`--quiet`/`--json`). */
  quiet?: boolean;
  /**
   * The read limits in force (the CLI's `--limit`, `RegistryReadOptions.limits`), so that a
   * transform building tables of its own is bounded by the same options as the reader: check
   * them with `checkLimit(ctx.limits, …)`, which uses the default of a limit not given here.
   * `registry.transform()` fills in the registry's default limits (`setDefaultLimits`) under
   * the ones passed. Optional (an addition to adapter contract v1): absent from callers older
   * than it, which `checkLimit`/`limitValue` treat as the defaults.
   */
  limits?: ReadLimits;
}

export interface TransformResult {
  profile: Profile;
  warnings: Warning[];
}

/** A profile → profile step contributed by an adapter. */
export interface AdapterTransform {
  /** Unique across adapters, e.g. `symbolize`. */
  name: string;
  summary: string;
  /** The options it understands (names without `--`). */
  options?: Record<string, CommandOption>;
  /** Returns a new profile (the input must not be modified) and the warnings to show. */
  apply(profile: Profile, ctx: TransformContext): Promise<TransformResult>;
}

/** First-party transforms, so that a missing one can be named with its install command. */
export const FIRST_PARTY_TRANSFORMS: readonly { transform: string; packageName: string }[] = [
  { transform: 'symbolize', packageName: '@profkit/symbolize' },
  { transform: 'r-accounting', packageName: '@profkit/rprof' },
  { transform: 'source-maps', packageName: '@profkit/v8' },
];

/** The shape of a command-line option (of an adapter command or a transform). */
export const commandOptionSchema = s.object({
  type: s.oneOf(['string', 'boolean']),
  short: s.optional(s.stringOfLength(1)),
  multiple: s.optional(s.boolean()),
  description: s.string(),
  valueName: s.optional(s.string()),
});

/** A function (adapter and transform members). */
export const functionShape = s.custom<(...args: unknown[]) => unknown>((v) => typeof v === 'function', 'expected a function');

/** The shape of one entry of an adapter's `transforms`. */
export const transformSchema = s.object({
  name: s.string(/^[a-z0-9][a-z0-9-]*$/, 'transform name: a lower-case word (letters, digits, "-")'),
  summary: s.string(),
  options: s.optional(s.record(commandOptionSchema, s.string(/^[a-z0-9][a-z0-9-]*$/, 'option name: lower-case letters, digits, "-"'))),
  apply: functionShape,
});

/** The `npm install` hint for a first-party transform, or undefined. */
export function transformInstallHint(name: string): { packageName: string; command: string } | undefined {
  const fp = FIRST_PARTY_TRANSFORMS.find((t) => t.transform === name);
  return fp ? { packageName: fp.packageName, command: `npm install ${fp.packageName}` } : undefined;
}

/**
 * The one-line error for a transform no registered adapter provides (exit code 4 in the CLI).
 * `unloaded` (the registry's `unloadedPackages`) names packages installed but not loaded, so that
 * the message says "not installed" only when that is true.
 */
export function missingTransformError(name: string, installed: readonly string[], unloaded: ReadonlyMap<string, string> = new Map()): ProfkitError {
  const hint = transformInstallHint(name);
  const notLoaded = hint ? unloaded.get(hint.packageName) : undefined;
  const msg = hint
    ? notLoaded !== undefined
      ? `the ${name} transform is provided by ${hint.packageName}, which is ${notLoaded}`
      : `the ${name} transform is provided by ${hint.packageName}, which is not installed: run \`${hint.command}\` and add "${hint.packageName}" to profkit.config.json's "adapters"`
    : `no installed adapter provides the transform "${name}" (installed transforms: ${installed.length ? installed.join(', ') : 'none'})`;
  return new ProfkitError(ErrorCodes.NO_ADAPTER, msg, { transform: name, install: hint?.command, rule: 'transform must be installed' });
}

/**
 * Checks option values against a transform's declared options: unknown names and values of the
 * wrong type are `PROFKIT_E_USAGE` errors naming the option.
 */
export function checkTransformValues(t: Pick<AdapterTransform, 'name' | 'options'>, values: TransformValues): void {
  const declared = t.options ?? {};
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) continue;
    const o = declared[k];
    if (!o) {
      const known = Object.keys(declared);
      throw new ProfkitError(ErrorCodes.USAGE, `the ${t.name} transform has no option --${k} (options: ${known.length ? known.map((x) => '--' + x).join(', ') : 'none'})`, {
        option: k,
        transform: t.name,
        rule: 'transform options',
      });
    }
    const ok = o.multiple ? Array.isArray(v) && v.every((x) => typeof x === o.type) : typeof v === o.type;
    if (!ok) {
      throw new ProfkitError(ErrorCodes.USAGE, `option --${k} of the ${t.name} transform takes ${o.type === 'boolean' ? 'no value' : 'a value'}${o.multiple ? ' (repeatable)' : ''}`, {
        option: k,
        transform: t.name,
        rule: 'transform options',
      });
    }
  }
}

/**
 * Runs a transform: checks the values, calls `apply`, and checks what came back. Errors that are
 * not `ProfkitError`s become `PROFKIT_E_ADAPTER_FAILED` naming the adapter and transform.
 */
export async function runTransform(t: AdapterTransform, adapter: string, profile: Profile, ctx: TransformContext): Promise<TransformResult> {
  checkTransformValues(t, ctx.values);
  let r: TransformResult;
  try {
    r = await t.apply(profile, ctx);
  } catch (e) {
    if (isProfkitError(e)) throw e;
    if ((e as Error)?.name === 'AbortError') throw new ProfkitError(ErrorCodes.ABORTED, `the ${t.name} transform was interrupted`, { transform: t.name }, { cause: e });
    throw new ProfkitError('PROFKIT_E_ADAPTER_FAILED', `the ${t.name} transform of the ${adapter} adapter failed: ${e instanceof Error ? e.message : String(e)}`, {
      adapter,
      transform: t.name,
      rule: 'transforms throw ProfkitError',
    }, { cause: e });
  }
  if (typeof r !== 'object' || r === null || typeof r.profile !== 'object' || r.profile === null || !Array.isArray(r.warnings)) {
    throw new ProfkitError('PROFKIT_E_ADAPTER_FAILED', `the ${t.name} transform of the ${adapter} adapter returned ${r === null ? 'null' : typeof r} instead of { profile, warnings }`, {
      adapter,
      transform: t.name,
      rule: 'transform result shape',
    });
  }
  return { profile: r.profile, warnings: r.warnings };
}
