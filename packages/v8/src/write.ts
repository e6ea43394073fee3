/**
 * profkit profile → `.cpuprofile` JSON, in V8's own layout (nodes in depth-first pre-order from
 * `(root)` = id 1, then `startTime`, `endTime`, `samples`, `timeDeltas`), which Chrome DevTools,
 * VS Code and Node.js tooling load.
 *
 * Times: a profile read from a `.cpuprofile` keeps its sample timestamps
 * (`.extensions.v8.samples.timestamp_us`) and is written back with them, one V8 sample per
 * sample. Any other profile gets timestamps made from its values: each sample becomes `count`
 * V8 samples (its `count`-unit value, 1 when there is none) sharing its time value (the first
 * sample type measured in time), or one `period` apart (1 ms when the period is no time) when it
 * has no time value. Sample types other than those two are not written (a warning says so).
 */

import { ErrorCodes, ProfkitError, READ_LIMITS, limitError, type Profile, type Warning, type WriteResult } from '@profkit/core';
import { ADAPTER_NAME, ROOT_NAME } from './format.js';
import { JsonChunks, callFrameJson } from './json-out.js';
import { ROOT_CALL_FRAME, buildCallTree } from './stacks.js';
import { countTypeIndex, timeTypeIndex, toMicros, DEFAULT_INTERVAL_US } from './values.js';

export interface CpuProfileWriteOptions {
  /** The caller writes chunks as they come (see `WriteOptions.streaming`). */
  streaming?: boolean;
  signal?: AbortSignal;
}

export function writeCpuProfile(profile: Profile, options: CpuProfileWriteOptions = {}): WriteResult {
  const { tree, leafOfSample, warnings } = buildCallTree(profile);
  const n = leafOfSample.length;
  const values = profile.samples['.values'];
  const countIdx = countTypeIndex(profile);
  const timeIdx = timeTypeIndex(profile);
  const ext = profile['.extensions']?.[ADAPTER_NAME];
  const kept = ext?.samples?.timestamp_us;
  const facts = ext?.facts ?? {};

  const v8Samples: number[] = [];
  const timestamps: number[] = [];
  let startTime = typeof facts.startTime === 'number' ? facts.startTime : 0;
  let endTime: number;
  const hitCount = new Uint32Array(tree.size);
  const maxSamples = READ_LIMITS.maxSamples;
  let skipped = 0;
  if (kept instanceof Float64Array && kept.length === n && typeof facts.startTime === 'number') {
    // Written back as read: one V8 sample per sample, at its timestamp.
    let notOne = 0;
    for (let i = 0; i < n; i++) {
      v8Samples.push(leafOfSample[i]!);
      timestamps.push(kept[i]!);
      hitCount[leafOfSample[i]!]!++;
      if (countIdx >= 0 && values[countIdx]![i] !== 1n) notOne++;
    }
    if (notOne > 0) {
      warnings.push({
        code: 'PROFKIT_W_V8_SAMPLE_COUNTS',
        message: `${notOne} sample(s) have a count other than 1 but keep one timestamp each: each is written as one V8 sample`,
        detail: { samples: notOne },
      });
    }
    const last = n > 0 ? kept[n - 1]! : startTime;
    endTime = typeof facts.endTime === 'number' && facts.endTime >= last ? facts.endTime : last;
  } else {
    if (countIdx < 0 && timeIdx < 0) {
      throw new ProfkitError(ErrorCodes.UNSUPPORTED, `a .cpuprofile needs a sample type counted in samples or measured in time; this profile has ${profile.sample_types.type.map((t, i) => `${t}/${profile.sample_types.unit[i]}`).join(', ') || 'none'}`, {
        rule: '.cpuprofile samples are counts over time',
      });
    }
    const period = profile['.profile'].period_type ? toMicros(profile['.profile'].period, profile['.profile'].period_type.unit) : undefined;
    const intervalUs = period !== undefined && period > 0 ? period : DEFAULT_INTERVAL_US;
    let t = startTime;
    for (let i = 0; i < n; i++) {
      const count = countIdx >= 0 ? values[countIdx]![i]! : 1n;
      const micros = timeIdx >= 0 ? toMicros(values[timeIdx]![i]!, profile.sample_types.unit[timeIdx]!)! : undefined;
      if (count <= 0n || (micros !== undefined && micros < 0)) {
        skipped++;
        continue;
      }
      if (BigInt(v8Samples.length) + count > BigInt(maxSamples)) throw limitError('maxSamples', 'V8 samples to write', maxSamples, { rule: 'one V8 sample per counted sample' });
      const k = Number(count);
      const each = micros === undefined ? intervalUs : micros / k;
      for (let j = 0; j < k; j++) {
        v8Samples.push(leafOfSample[i]!);
        timestamps.push(Math.round(t));
        t += each;
      }
      hitCount[leafOfSample[i]!]! += k;
    }
    endTime = Math.round(t);
    if (n > 0) {
      warnings.push({
        code: 'PROFKIT_W_V8_SYNTHETIC_TIMES',
        message: `the profile has no V8 sample timestamps: times were made from ${timeIdx >= 0 ? `the ${profile.sample_types.type[timeIdx]} values` : `the sample counts, ${intervalUs} µs apart`}`,
        detail: {},
      });
    }
  }
  if (skipped > 0) warnings.push({ code: 'PROFKIT_W_V8_NEGATIVE_VALUES', message: `${skipped} sample(s) with a count or time ≤ 0 were not written`, detail: { samples: skipped } });
  const dropped = profile.sample_types.type.filter((_, i) => i !== countIdx && i !== timeIdx);
  if (dropped.length > 0) warnings.push({ code: 'PROFKIT_W_V8_SAMPLE_TYPES', message: `a .cpuprofile holds sample counts and times only: ${dropped.join(', ')} not written`, detail: { sampleTypes: dropped } });

  const ticks = positionTicks(profile, tree.size, leafOfSample, hitCount, kept instanceof Float64Array && kept.length === n, warnings);
  for (let v = 1; v < tree.size; v++) {
    const line = tree.frames[tree.frameOf[v]!]!.runningLine;
    if (line > 0 && hitCount[v]! > 0) addTicks(ticks, v, line, hitCount[v]!);
  }

  // Output in V8's layout: ids are pre-order positions + 1, so the root is 1.
  const { order, children } = tree.preorder();
  const idOf = new Uint32Array(tree.size);
  order.forEach((v, k) => (idOf[v] = k + 1));
  const out = new JsonChunks();
  out.push('{"nodes":[');
  for (let k = 0; k < order.length; k++) {
    if ((k & 0xffff) === 0xffff) options.signal?.throwIfAborted();
    const v = order[k]!;
    const cf = v === 0 ? ROOT_CALL_FRAME : tree.frames[tree.frameOf[v]!]!.callFrame;
    let node = `${k ? ',' : ''}{"id":${k + 1},"callFrame":${callFrameJson(cf)},"hitCount":${hitCount[v]}`;
    const c = children[v]!;
    if (c.length > 0) node += `,"children":[${c.map((x) => idOf[x]).join(',')}]`;
    const t = ticks.get(v);
    if (t) node += `,"positionTicks":[${[...t].map(([line, count]) => `{"line":${line},"ticks":${count}}`).join(',')}]`;
    out.push(node + '}');
  }
  out.push(`],"startTime":${num(startTime)},"endTime":${num(endTime)},"samples":[`);
  for (let k = 0; k < v8Samples.length; k += 4096) out.push((k ? ',' : '') + v8Samples.slice(k, k + 4096).map((v) => idOf[v]).join(','));
  out.push('],"timeDeltas":[');
  let prev = startTime;
  for (let k = 0; k < timestamps.length; k += 4096) {
    const part: string[] = [];
    for (let j = k; j < Math.min(k + 4096, timestamps.length); j++) {
      part.push(num(timestamps[j]! - prev));
      prev = timestamps[j]!;
    }
    out.push((k ? ',' : '') + part.join(','));
  }
  out.push(']}');
  if (tree.frames.some((f) => f.callFrame.functionName === ROOT_NAME)) {
    warnings.push({ code: 'PROFKIT_W_V8_ROOT_FRAME', message: 'a frame named (root) was written below the root: DevTools shows it as a function', detail: {} });
  }
  return { data: out.result(options.streaming), warnings };
}

/** The V8 reader's `position_ticks` table, placed on the nodes of the samples it names. */
function positionTicks(profile: Profile, nodes: number, leafOfSample: Uint32Array, hitCount: Uint32Array, asRead: boolean, warnings: Warning[]): Map<number, Map<number, number>> {
  const ticks = new Map<number, Map<number, number>>();
  const t = profile['.extensions']?.[ADAPTER_NAME]?.tables?.position_ticks;
  if (!t) return ticks;
  const sample = t.sample;
  const line = t.line;
  const count = t.ticks;
  if (!asRead || !(sample instanceof Uint32Array) || !(line instanceof Float64Array) || !(count instanceof Uint32Array) || line.length !== sample.length || count.length !== sample.length) {
    warnings.push({ code: 'PROFKIT_W_V8_POSITION_TICKS', message: 'the positionTicks kept from a .cpuprofile no longer match the samples: they were not written', detail: {} });
    return ticks;
  }
  let stale = 0;
  for (let i = 0; i < sample.length; i++) {
    const s = sample[i]!;
    if (s >= leafOfSample.length || leafOfSample[s]! >= nodes || hitCount[leafOfSample[s]!] === 0) {
      stale++;
      continue;
    }
    addTicks(ticks, leafOfSample[s]!, line[i]!, count[i]!);
  }
  if (stale > 0) warnings.push({ code: 'PROFKIT_W_V8_POSITION_TICKS', message: `${stale} positionTicks entries name samples that are gone: they were not written`, detail: { entries: stale } });
  return ticks;
}

function addTicks(ticks: Map<number, Map<number, number>>, node: number, line: number, count: number): void {
  let m = ticks.get(node);
  if (!m) ticks.set(node, (m = new Map()));
  m.set(line, (m.get(line) ?? 0) + count);
}

/** A number as JSON (integers stay integers; never `NaN`). */
function num(x: number): string {
  return Number.isFinite(x) ? String(x) : '0';
}
