/**
 * `ReportGraphSource.nodeSums` (every node's flat and cum, trusted in place of a walk) is never
 * given with a `-mean` divisor, which the report walks over `g` itself: a source breaking that
 * contract is refused (a typed usage error), not reported with means of mismatched sums.
 */

import { describe, expect, it } from 'vitest';
import { ErrorCodes, ProfileBuilder, ProfileIndex, isProfkitError } from '../src/index.js';
import { buildNodes, flattenLocationNodes, newNodeNames, reportStacks, trimmedCallGraph, type CallGraphOptions, type GraphInput, type ReportGraphSource } from '../src/ops/report.js';
import { thrownBy } from '@profkit/test-utils';

function source(options: CallGraphOptions): ReportGraphSource {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'contentions', unit: 'count' }, { type: 'delay', unit: 'nanoseconds' }] });
  const [main, lock, wait] = ['main', 'lock', 'wait'].map((name) => b.internFunction({ name }));
  const [lMain, lLock, lWait] = [main!, lock!, wait!].map((functionId) => b.internLocation({ functionId }));
  b.addSample([lLock!, lMain!], [2n, 600n]);
  b.addSample([lWait!, lMain!], [1n, 900n]);
  const p = b.build();
  const nodes = newNodeNames();
  const { locNodes, stacks, divisor } = reportStacks(p, new ProfileIndex(p), 1, options, nodes);
  const g: GraphInput = { nNodes: nodes.names.length, ...flattenLocationNodes(locNodes), stacks, ...(divisor ? { divisor } : {}) };
  return { t: 1, unit: 'nanoseconds', g, names: nodes.names, infos: nodes.infos, total: () => 1500n };
}

describe('ReportGraphSource.nodeSums', () => {
  it('given with the sums a walk makes, the report is the walked one', () => {
    const s = source({});
    const sums = buildNodes(s.g, undefined);
    expect(trimmedCallGraph({ ...s, nodeSums: { flat: sums.flat, cum: sums.cum } }, {}, true).nodes).toEqual(trimmedCallGraph(s, {}, true).nodes);
  });

  it('given with a -mean divisor: a typed usage error', () => {
    const options: CallGraphOptions = { meanDivisorIndex: 0 };
    const s = source(options);
    expect(trimmedCallGraph(s, options, true).nodes.find((n) => n.name === 'main')?.cum).toBe(500n); // (600 + 900) / 3
    const sums = buildNodes(s.g, undefined);
    const e = thrownBy(() => trimmedCallGraph({ ...s, nodeSums: { flat: sums.flat, cum: sums.cum } }, options, true));
    expect(isProfkitError(e) ? [e.code, e.detail.rule] : e).toEqual([ErrorCodes.USAGE, 'ReportGraphSource.nodeSums is never given with a divisor']);
  });
});
