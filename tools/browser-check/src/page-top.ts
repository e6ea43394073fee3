/**
 * The browser side of the Chromium check: `installProfkitTop(adapters)` gives the page
 * `profkitTop(url, fileName, kind)`, which fetches a profile, reads it through a `Registry` of
 * `adapters` from bytes, a Blob or a ReadableStream (format detection, gzip, limits as on Node)
 * and returns the `profkit top --json` document as JSON text: the same core calls as
 * `packages/cli/src/commands/top.ts` with its default options (drop_frames applied as in
 * `asViewed`, the default sample type, `topReport`), so the test can compare it with the CLI's
 * output on Node. `profkitGzip` says which gzip implementation core's seam picked.
 */

import { GZIP_IMPLEMENTATION, Registry, applyDropFrames, defaultSampleTypeIndex, topReport, type Adapter } from '@profkit/core';

/** A percentage of the total as the CLI prints it (`pct` of `packages/cli/src/commands/shared.ts`). */
function pct(v: bigint, total: bigint): number {
  return total === 0n ? 0 : Math.round((Number(v) / Number(total)) * 1e6) / 1e4;
}

/** The CLI's JSON: bigint as decimal strings (`toJson` of `packages/cli/src/output.ts`). */
function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

/** How the page hands the fetched profile to the registry. */
type SourceKind = 'bytes' | 'blob' | 'stream';

async function sourceOf(response: Response, kind: SourceKind): Promise<Uint8Array | Blob | ReadableStream<Uint8Array>> {
  if (kind === 'blob') return response.blob();
  if (kind === 'stream' && response.body) return response.body;
  return new Uint8Array(await response.arrayBuffer());
}

/** The `profkit top FILE --json` document (without `file`) for the profile at `url`, read as `kind` by `registry`. */
async function profkitTop(registry: Registry, url: string, fileName: string, kind: SourceKind = 'bytes'): Promise<string> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  const read = await registry.read(await sourceOf(response, kind), { fileName });
  const viewed = await applyDropFrames(read.profile);
  const profile = viewed.profile;
  const warnings = [...read.warnings, ...viewed.warnings];
  const t = defaultSampleTypeIndex(profile);
  const rep = topReport(profile, { sampleTypeIndex: t });
  let sum = 0n;
  return toJson({
    schema: 'profkit.top/1',
    format: read.format,
    accounting: 'pprof',
    sampleType: { type: profile.sample_types.type[t], unit: profile.sample_types.unit[t] },
    total: rep.total,
    outputUnit: rep.table.outputUnit,
    header: rep.header,
    droppedNodes: rep.droppedNodes,
    entriesBeforeLimit: rep.origCount,
    entries: rep.table.entries.map((e) => {
      sum += e.flat;
      return { name: e.name, flat: e.flat, flatPercent: pct(e.flat, rep.total), sumPercent: pct(sum, rep.total), cum: e.cum, cumPercent: pct(e.cum, rep.total), inline: e.inline || null };
    }),
    warnings,
  });
}

/** Makes `profkitTop` (reading with `adapters` only) and `profkitGzip` globals of the page. */
export function installProfkitTop(adapters: readonly Adapter[]): void {
  const registry = new Registry(adapters);
  const top = (url: string, fileName: string, kind?: SourceKind) => profkitTop(registry, url, fileName, kind);
  Object.assign(globalThis, { profkitTop: top, profkitGzip: GZIP_IMPLEMENTATION });
}
