/**
 * The call tree of a `.cpuprofile`: a flat `nodes` array linked by `children` ids (or, from some
 * producers, `parent` ids). Checks that it is one tree (ids unique, every child id known, one
 * parent per node, one root, no cycle) and gives each node its parent and depth, so that a
 * sample's stack is the walk from its node up to the root.
 */

import { checkLimit, limitValue, type ReadLimits } from '@profkit/core';
import { arrayAt, integerAt, schemaError, type JsonSource } from './json.js';

export interface FlatTree {
  /** Node index → the index of its parent (-1 for the root). */
  parent: Int32Array;
  /** Node index → number of ancestors (0 for the root). */
  depth: Uint32Array;
  /** Node index of the root. */
  root: number;
  /** Node indices, parents before children. */
  order: Uint32Array;
}

/**
 * Links the nodes: `ids[i]` is node i's id, `childIds(i)` / `parentId(i)` read the JSON fields
 * (undefined when absent). Errors name the JSON path and the tree rule broken.
 */
export function linkTree(
  src: JsonSource,
  ids: ArrayLike<number>,
  idToIndex: ReadonlyMap<number, number>,
  childIds: (i: number) => unknown,
  parentId: (i: number) => unknown,
  limits: ReadLimits | undefined,
): FlatTree {
  const n = ids.length;
  const parent = new Int32Array(n).fill(-1);
  let links = 0;
  for (let i = 0; i < n; i++) {
    const raw = childIds(i);
    if (raw === undefined) continue;
    const children = arrayAt(src, raw, `nodes[${i}].children`);
    links += children.length;
    checkLimit(limits, 'maxTableEntries', links, 'child links of the nodes', { file: src.file });
    for (let j = 0; j < children.length; j++) {
      const path = `nodes[${i}].children[${j}]`;
      const c = idToIndex.get(integerAt(src, children[j], path, 0));
      if (c === undefined) throw schemaError(src, path, `child id ${children[j]} is not the id of any node`, 'children name existing node ids');
      if (c === i) throw schemaError(src, path, `node ${ids[i]} lists itself as a child (a cycle)`, 'the nodes form a tree (no cycle)');
      if (parent[c] !== -1) {
        throw schemaError(src, path, `node ${ids[c]} is a child of both node ${ids[parent[c]!]} and node ${ids[i]}`, 'the nodes form a tree (one parent per node)');
      }
      parent[c] = i;
    }
  }
  for (let i = 0; i < n; i++) {
    const raw = parentId(i);
    if (raw === undefined || parent[i] !== -1) continue;
    const path = `nodes[${i}].parent`;
    const p = idToIndex.get(integerAt(src, raw, path, 0));
    if (p === undefined) throw schemaError(src, path, `parent id ${raw} is not the id of any node`, 'parent names an existing node id');
    parent[i] = p;
  }
  let root = -1;
  for (let i = 0; i < n; i++) {
    if (parent[i] !== -1) continue;
    if (root !== -1) throw schemaError(src, `nodes[${i}]`, `node ${ids[i]} has no parent, nor has node ${ids[root]}: a profile has one root`, 'the nodes form one tree (one root)');
    root = i;
  }
  if (root === -1 && n > 0) throw schemaError(src, 'nodes', 'every node has a parent, so the parent links form a cycle', 'the nodes form a tree (no cycle)');

  // Children lists from the parent links (CSR), then a breadth-first walk from the root: a node
  // it does not reach is on a cycle of parent links.
  const childStart = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) if (parent[i]! >= 0) childStart[parent[i]! + 1]!++;
  for (let i = 0; i < n; i++) childStart[i + 1]! += childStart[i]!;
  const fill = childStart.slice(0, n);
  const childList = new Uint32Array(Math.max(0, n - 1));
  for (let i = 0; i < n; i++) if (parent[i]! >= 0) childList[fill[parent[i]!]!++] = i;
  const order = new Uint32Array(n);
  const depth = new Uint32Array(n);
  const reached = new Uint8Array(n);
  const maxDepth = limitValue(limits, 'maxFramesPerStack');
  let visited = 0;
  if (root >= 0) {
    order[visited++] = root;
    reached[root] = 1;
  }
  for (let k = 0; k < visited; k++) {
    const v = order[k]!;
    for (let c = childStart[v]!; c < childStart[v + 1]!; c++) {
      const w = childList[c]!;
      depth[w] = depth[v]! + 1;
      if (depth[w]! > maxDepth) checkLimit(limits, 'maxFramesPerStack', depth[w]!, `depth of node ${ids[w]}`, { file: src.file, path: `nodes[${w}]` });
      order[visited++] = w;
      reached[w] = 1;
    }
  }
  if (visited < n) {
    const lost = reached.indexOf(0);
    throw schemaError(src, `nodes[${lost}]`, `node ${ids[lost]} cannot be reached from the root node ${ids[root]}: its parent links form a cycle`, 'the nodes form a tree (no cycle)');
  }
  return { parent, depth, root, order };
}
