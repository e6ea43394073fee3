/**
 * pprof's `-add_comment TEXT` and `-buildid ID` on the commands that write a profile (convert,
 * filter, merge), as google/pprof's driver applies them to every profile it reads
 * (`internal/driver/fetch.go`): the build id of each input's first mapping (the main binary) is
 * replaced as the input is read, before symbolization and merging; the comment is appended to the
 * comments of the final profile. An empty value changes nothing, as in pprof.
 */

import type { CommandOption, Profile } from '@profkit/core/node';
import type { CliContext } from '../types.js';
import { stringOption } from './shared.js';

export const ANNOTATION_OPTIONS: Record<string, CommandOption> = {
  'add-comment': { type: 'string', valueName: 'TEXT', description: "append TEXT to the profile's comments (pprof -add_comment)" },
  buildid: { type: 'string', valueName: 'ID', description: 'set the build id of the first mapping, the main binary (pprof -buildid)' },
};

/**
 * `p` with its first mapping's build id set to `--buildid` (pprof's `locateBinaries`). A profile
 * without mappings gets pprof's stand-in first: mapping 1 with zero addresses, which every
 * location then falls in.
 */
export function withBuildIdOverride(ctx: CliContext, p: Profile): Profile {
  const buildId = stringOption(ctx, 'buildid');
  if (buildId === undefined || buildId === '') return p;
  const m = p['.mappings'];
  if (m.mapping_id.length === 0) {
    const one: Profile['.mappings'] = {
      mapping_id: Uint32Array.of(1),
      memory_start: BigUint64Array.of(0n),
      memory_limit: BigUint64Array.of(0n),
      file_offset: BigUint64Array.of(0n),
      filename: [''],
      build_id: [buildId],
      has_functions: Uint8Array.of(0),
      has_filenames: Uint8Array.of(0),
      has_line_numbers: Uint8Array.of(0),
      has_inline_frames: Uint8Array.of(0),
    };
    const locations = { ...p.locations, '.mapping_id': new Uint32Array(p.locations.location_id.length).fill(1) };
    return { ...p, locations, '.mappings': one };
  }
  return { ...p, '.mappings': { ...m, build_id: [buildId, ...m.build_id.slice(1)] } };
}

/** `p` with `--add-comment` appended to its comments. */
export function withAddedComment(ctx: CliContext, p: Profile): Profile {
  const comment = stringOption(ctx, 'add-comment');
  if (comment === undefined || comment === '') return p;
  return { ...p, '.profile': { ...p['.profile'], comments: [...p['.profile'].comments, comment] } };
}
