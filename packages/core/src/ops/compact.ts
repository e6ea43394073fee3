/** `compact`: pprof `Compact` (a merge of one profile). */

import type { Profile } from '../model.js';
import { merge } from './merge.js';

/**
 * pprof `Compact` (= merge of one profile): drops all-zero samples, merges samples with the same
 * stack and labels, garbage-collects unreferenced locations, functions and mappings (the first
 * mapping, the main binary, is always kept first) and renumbers ids densely in first-use order.
 */
export function compact(p: Profile): Profile {
  return merge([p]);
}
