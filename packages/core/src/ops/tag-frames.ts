/**
 * `addTagFrames`: pprof's `-tagroot` / `-tagleaf` (driver `addLabelNodes`): pseudo frames
 * "value" (file: the label key) added at the root or the leaf of every sample's stack, so that
 * reports split costs by label.
 */

import type { LabelRow } from '../views.js';
import type { Profile } from '../model.js';
import { ProfileIndex, labelsOf, sampleTypes } from '../views.js';
import { formatValue } from './format.js';
import { Rebuilder, copyFacts, labelInputs, stackRows } from './internal.js';
import { StringKeyedMap } from '../string-keys.js';

/** The name the views read as "no function name" (pprof's empty name; see report.ts). */
const NO_NAME = '<?>';

/**
 * pprof `formatLabelValues`: a sample's string values of label `key`, then its numeric values
 * scaled to `outputUnit` (numbers without a unit printed bare).
 */
function labelValues(labels: LabelRow[], key: string, outputUnit: string): string[] {
  const values: string[] = [];
  for (const l of labels) if (l.key === key && l.str !== undefined) values.push(l.str);
  for (const l of labels) {
    if (l.key !== key || l.num === undefined) continue;
    values.push(l.unit ? formatValue(l.num, l.unit, outputUnit) : formatValue(l.num, '', ''));
  }
  return values;
}

export interface TagFramesResult {
  profile: Profile;
  /** Whether some sample has a label of `rootKeys` / `leafKeys` (pprof warns when not). */
  rootMatched: boolean;
  leafMatched: boolean;
}

/**
 * Adds one pseudo frame per key to every sample: for `rootKeys` above its root (the first key
 * outermost), for `leafKeys` below its leaf (the last key innermost). A frame's function is the
 * sample's values of the key joined with "," (numeric ones formatted in `outputUnit`, pprof's
 * `-unit`) and its file is the key; a sample without the label gets a frame without a name.
 */
export function addTagFrames(p: Profile, rootKeys: readonly string[], leafKeys: readonly string[], outputUnit = 'minimum'): TagFramesResult {
  const index = new ProfileIndex(p);
  const rb = new Rebuilder({ sampleTypes: sampleTypes(p), facts: copyFacts(p['.profile']), mergeMappings: false });
  rb.addSource(p, index);
  if (p['.mappings'].mapping_id.length > 0) rb.mapping(0, 0);
  // Keyed through StringKeyedMap: label values are the input's strings (see string-keys.ts).
  const frameIds = new StringKeyedMap<number>();
  const frameOf = (name: string, key: string): number => {
    const k = JSON.stringify([name, key]);
    let id = frameIds.get(k);
    if (id === undefined) {
      const fn = rb.b.internFunction({ name: name === '' ? NO_NAME : name, systemName: '', filename: key });
      id = rb.b.internLocation({ functionId: fn });
      frameIds.set(k, id);
    }
    return id;
  };
  let rootMatched = false;
  let leafMatched = false;
  /** The frames of `keys` for a sample, innermost first (the last key first). */
  const framesOf = (labels: LabelRow[], keys: readonly string[], matched: () => void): number[] => {
    const out: number[] = [];
    for (let k = keys.length - 1; k >= 0; k--) {
      const values = labelValues(labels, keys[k]!, outputUnit);
      if (values.length > 0) matched();
      out.push(frameOf(values.join(','), keys[k]!));
    }
    return out;
  };
  const cols = p.samples['.values'];
  const vals = new Array<bigint>(cols.length);
  for (let i = 0; i < p.samples.value.length; i++) {
    const labels = labelsOf(p, i);
    const roots = framesOf(labels, rootKeys, () => (rootMatched = true));
    const leaves = framesOf(labels, leafKeys, () => (leafMatched = true));
    const stack = rb.stack(0, stackRows(p, index, i));
    for (let t = 0; t < cols.length; t++) vals[t] = cols[t]![i]!;
    rb.addSample(0, i, [...leaves, ...stack, ...roots], vals, labelInputs(p, i));
  }
  return { profile: rb.build(), rootMatched, leafMatched };
}
