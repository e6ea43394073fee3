import { goPprofLoad, type Profile, type RegistryReadResult } from '@profkit/core';
import type { CliContext } from '../types.js';
import { phase, readWithProgress } from './shared.js';

/**
 * Reads FILE and loads it as `go tool pprof` does before a report (`goPprofLoad`: merged with
 * itself, drop_frames applied, URL mapping files cleared): how raw, traces and tags read.
 */
export async function readAsGoPprof(ctx: CliContext, file: string): Promise<RegistryReadResult & { loaded: Profile }> {
  const r = await readWithProgress(ctx, file);
  const l = await phase(ctx, 'loading as go tool pprof does', () => goPprofLoad(r.profile));
  return { ...r, loaded: l.profile, warnings: [...r.warnings, ...l.warnings] };
}
