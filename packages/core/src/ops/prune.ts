/** Frame pruning: pprof `Prune`, `RemoveUninteresting` and `PruneFrom`. */

import { isProfkitError, type Warning } from '../errors.js';
import type { Profile } from '../model.js';
import { ProfileIndex } from '../views.js';
import { rebuildSamplewise, readLocations, type OpLocation } from './internal.js';
import { compileGoPattern, compileMatcher, compilePattern, type Pattern, type PatternCompiler, type PatternMatcher } from './regex.js';

const RESERVED_NAMES = ['(anonymous namespace)', 'operator()'];

/**
 * pprof's name simplification before drop/keep matching: a leading `.` (PPC ELF v1) is removed
 * and the name is cut at the first `(` that does not start `(anonymous namespace)` or belong to
 * `operator()`.
 */
export function simplifyFunctionName(name: string): string {
  const s = name.startsWith('.') ? name.slice(1) : name;
  let i = 0;
  while (i < s.length) {
    const reserved = RESERVED_NAMES.find((r) => s.startsWith(r, i));
    if (reserved) {
      i += reserved.length;
      continue;
    }
    if (s[i] === '(') return s.slice(0, i);
    i++;
  }
  return s;
}

export interface PruneOptions {
  /**
   * Frames to drop with everything beneath them (leaf side). A string is matched against the
   * whole simplified name (compiled as `^(…)$`, like the profile's `drop_frames`); a `RegExp`
   * is used as given.
   */
  dropFrames: Pattern;
  /** Frames matching `dropFrames` that are kept anyway (same matching rules). */
  keepFrames?: Pattern;
}

/**
 * pprof `Prune`: removes, from every sample, the frames beneath (leaf side of) the first frame,
 * scanning from the root, that matches `dropFrames` and not `keepFrames` — the matching frame
 * is removed too. Root-side frames are never pruned before a frame that does not match has been
 * seen, so a stack is never emptied. Within a location the lines (inline frames) are scanned
 * outermost first: a match on an inner line removes it and the lines inlined into it, keeping
 * the location with its outer lines. Samples stay one per input sample (extension columns
 * kept); ids are renumbered.
 */
export function prune(p: Profile, options: PruneOptions): Profile {
  const drop = compilePattern(options.dropFrames, 'dropFrames', true);
  const keep = options.keepFrames === undefined || options.keepFrames === '' ? undefined : compilePattern(options.keepFrames, 'keepFrames', true);
  const index = new ProfileIndex(p);
  return pruneMatching(p, index, drop, keep) ?? rebuildSamplewise(p, index, undefined, (_i, rows) => rows);
}

/** `prune` with compiled patterns; `undefined` when no location has a matching frame (nothing to do). */
function pruneMatching(p: Profile, index: ProfileIndex, drop: PatternMatcher, keep: PatternMatcher | undefined): Profile | undefined {
  const locs = readLocations(p, index);
  const names = p.functions.name;
  const pruneLoc = new Uint8Array(locs.length);
  const pruneBeneath = new Uint8Array(locs.length);
  let matched = false;
  for (let r = 0; r < locs.length; r++) {
    const loc = locs[r]!;
    let i: number;
    for (i = loc.lines.length - 1; i >= 0; i--) {
      const name = names[loc.lines[i]!.fn]!;
      if (name === '') continue;
      const s = simplifyFunctionName(name);
      if (drop.test(s) && !(keep && keep.test(s))) break;
    }
    if (i >= 0) {
      matched = true;
      pruneBeneath[r] = 1;
      if (i === loc.lines.length - 1) pruneLoc[r] = 1;
      else locs[r] = { ...loc, lines: loc.lines.slice(i + 1) };
    }
  }
  if (!matched) return undefined;
  return rebuildSamplewise(p, index, locs, (_i, rows) => {
    let foundUser = false;
    for (let i = rows.length - 1; i >= 0; i--) {
      const r = rows[i]!;
      if (!pruneLoc[r] && !pruneBeneath[r]) {
        foundUser = true;
        continue;
      }
      if (!foundUser) continue;
      if (pruneLoc[r]) return rows.slice(i + 1);
      return rows.slice(i);
    }
    return rows;
  });
}

/**
 * pprof `RemoveUninteresting`: `prune` with the profile's own `drop_frames`/`keep_frames`
 * (full-match). Without `drop_frames` the profile is returned as a copy.
 */
export function removeUninteresting(p: Profile): Profile {
  const f = p['.profile'];
  if (f.drop_frames === '') {
    const index = new ProfileIndex(p);
    return rebuildSamplewise(p, index, undefined, (_i, rows) => rows);
  }
  return prune(p, { dropFrames: f.drop_frames, keepFrames: f.keep_frames === '' ? undefined : f.keep_frames });
}

/** The patterns `applyDropFrames` applies (a profile's `.profile` facts fit). */
export interface DropFramesPatterns {
  drop_frames: string;
  keep_frames: string;
}

export interface AppliedDropFrames {
  /** The pruned profile, or the input itself when nothing was pruned. */
  profile: Profile;
  /** True when some frame matched (the profile was rebuilt). */
  pruned: boolean;
  /** `PROFKIT_W_DROP_FRAMES_INVALID` when a pattern does not compile (the profile is then left as is). */
  warnings: Warning[];
}

/**
 * What `go tool pprof` does to every profile it loads for a report (`RemoveUninteresting`,
 * called when fetching, after symbolization and before focus/ignore): the frames matched by
 * `drop_frames` (and not `keep_frames`), anchored `^(…)$` against the simplified function name,
 * are removed with everything beneath them. Views (top, tree, peek, folded, flame, diff) apply
 * it on load so that their numbers are pprof's; commands that write profiles do not (the
 * patterns stay in the profile). `patterns` defaults to the profile's own; a diff applies the
 * new profile's to both sides, as pprof applies the merged profile's (the first source's).
 *
 * Unlike `prune` and `removeUninteresting` (JavaScript `RegExp`), the patterns are compiled as Go
 * RE2 expressions (`compileGoPattern`): pprof's semantics exactly, and linear-time matching,
 * since they come from the (possibly hostile) profile. Returns `p` itself when no frame matches.
 * A pattern that does not compile is a warning, not an error: pprof ignores the compile error
 * and shows the profile unpruned.
 */
export async function applyDropFrames(p: Profile, patterns: DropFramesPatterns = p['.profile']): Promise<AppliedDropFrames> {
  if (patterns.drop_frames === '') return { profile: p, pruned: false, warnings: [] };
  let drop: PatternMatcher;
  let keep: PatternMatcher | undefined;
  try {
    drop = await compileGoPattern(patterns.drop_frames, 'drop_frames', true);
    keep = patterns.keep_frames === '' ? undefined : await compileGoPattern(patterns.keep_frames, 'keep_frames', true);
  } catch (e) {
    if (!isProfkitError(e)) throw e;
    const option = String(e.detail.option);
    return {
      profile: p,
      pruned: false,
      warnings: [
        {
          code: 'PROFKIT_W_DROP_FRAMES_INVALID',
          message: `the profile's ${option} is not a valid regular expression, frames not pruned (as in pprof): ${e.message}`,
          detail: { option, rule: 'drop_frames/keep_frames must be valid regular expressions' },
        },
      ],
    };
  }
  const pruned = pruneMatching(p, new ProfileIndex(p), drop, keep);
  return { profile: pruned ?? p, pruned: pruned !== undefined, warnings: [] };
}

/**
 * pprof `PruneFrom`: in every sample, scanning from the leaf, the first frame whose simplified
 * name matches `pattern` (a string is searched anywhere in the name, like `-prune_from`) becomes
 * the new leaf: everything beneath it is removed (inline lines inside its location too), the
 * frame itself is kept.
 */
export function pruneFrom(p: Profile, pattern: Pattern, compile?: PatternCompiler): Profile {
  const index = new ProfileIndex(p);
  const locs = readLocations(p, index);
  const beneath = pruneFromLocations(p, locs, pattern, compile);
  return rebuildSamplewise(p, index, locs, (_i, rows) => {
    for (let i = 0; i < rows.length; i++) if (beneath[rows[i]!]) return rows.slice(i);
    return rows;
  });
}

/**
 * The location side of `pruneFrom`: marks the rows of `locs` with a matching line (the new leaf
 * of the stacks through them) and cuts their lines beneath it, in place.
 */
export function pruneFromLocations(p: Profile, locs: OpLocation[], pattern: Pattern, compile?: PatternCompiler): Uint8Array {
  const re = compileMatcher(pattern, 'pruneFrom', compile);
  const names = p.functions.name;
  const beneath = new Uint8Array(locs.length);
  for (let r = 0; r < locs.length; r++) {
    const loc = locs[r]!;
    for (let i = 0; i < loc.lines.length; i++) {
      const name = names[loc.lines[i]!.fn]!;
      if (name === '') continue;
      if (re.test(simplifyFunctionName(name))) {
        beneath[r] = 1;
        locs[r] = { ...loc, lines: loc.lines.slice(i) };
        break;
      }
    }
  }
  return beneath;
}
