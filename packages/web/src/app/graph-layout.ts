/**
 * The call graph's layout, built as its own script (dist/www/graph.js, scripts/build-app.mjs):
 * Graphviz compiled to WebAssembly (`@viz-js/viz`, the `dot` engine, as `profkit graph --format
 * svg` uses it), about 1.3 MB, so the page loads it only when the graph view is first shown and
 * its first paint does not wait for it. A classic script (the page also runs from file://): it
 * sets `globalThis.profkitGraph`.
 */

import { instance } from '@viz-js/viz';

export interface GraphLayout {
  /** The SVG element Graphviz draws for `dot`; throws with Graphviz's errors. */
  dotToSvg(dot: string): Promise<SVGSVGElement>;
}

let viz: ReturnType<typeof instance> | undefined;

const layout: GraphLayout = {
  async dotToSvg(dot) {
    viz ??= instance();
    return (await viz).renderSVGElement(dot, { engine: 'dot' });
  },
};

(globalThis as unknown as { profkitGraph: GraphLayout }).profkitGraph = layout;
