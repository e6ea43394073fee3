/**
 * `go tool pprof -topproto`: the `-top` table as a profile (pprof `printTopProto`): one sample per
 * table entry with the values `cum` and `flat` in the report's output unit (truncated to
 * integers, as pprof does), each at a location of its own with one line of the entry's function.
 */

import { ProfileBuilder } from '../builder.js';
import type { Profile } from '../model.js';
import { EMPTY_NAME_PLACEHOLDER } from '../pprof-text.js';
import { scaleMeasurement } from './format.js';
import { goGraph, sortGoNodes } from './pprof-graph.js';
import { outputUnitFor } from './report.js';

export interface TopProtoOptions {
  /** The sample type reported (pprof `-sample_index`); default the profile's default type. */
  sampleTypeIndex?: number;
  /** Order by cumulative value (pprof `-cum`). */
  cum?: boolean;
  /** Leave out entries whose |cum| is below this fraction of the total (pprof `-nodefraction`, default 0.005). */
  nodeFraction?: number;
  /** The report total (default: of `loaded`; pprof takes it before -focus and the other filters). */
  total?: bigint;
}

/** `go tool pprof -topproto` of a `goPprofLoad` result: the top table as a profile. */
export function topProtoReport(loaded: Profile, options: TopProtoOptions = {}): Profile {
  const g = goGraph(loaded, { sampleTypeIndex: options.sampleTypeIndex, granularity: 'functions', nodeFraction: options.nodeFraction ?? 0.005, total: options.total });
  const nodes = sortGoNodes(g.nodes, options.cum);
  const unit = outputUnitFor(nodes, g.total, g.unit);
  const scaled = (v: bigint) => BigInt(Math.trunc(scaleMeasurement(Number(v), g.unit, unit)[0]));
  const b = new ProfileBuilder({
    sampleTypes: [
      { type: 'cum', unit },
      { type: 'flat', unit },
    ],
    facts: {
      time_nanos: loaded['.profile'].time_nanos,
      duration_nanos: loaded['.profile'].duration_nanos,
      period_type: loaded['.profile'].period_type,
      period: loaded['.profile'].period,
    },
  });
  for (const n of nodes) {
    const i = n.info;
    // pprof's functionMap: one function per (name, system name, file, start line). pprof leaves
    // the names empty (the system name always): the placeholder is written as an empty name.
    const functionId = b.internFunction({ name: i.name || EMPTY_NAME_PLACEHOLDER, systemName: i.origName || EMPTY_NAME_PLACEHOLDER, filename: i.file, startLine: i.startLine });
    const location = b.addLocation({ functionId, line: i.lineno, address: i.address });
    b.addSample([location], [scaled(n.cum), scaled(n.flat)]);
  }
  return b.build();
}
