/**
 * The adapters profkit web reads with: the published platform-neutral ones (docs/browser.md),
 * in the page's Web Worker and in the server (which reads the profile for the names of the
 * source files it may serve). The example speedscope adapter (tools/adapter-example-speedscope)
 * is not one: it is not published, and it depends on the CLI, which depends on this package.
 */

import { Registry } from '@profkit/core';
import { fuchsiaSampler } from '@profkit/fuchsia-sampler';
import { gperftoolsHeapAdapter } from '@profkit/gperftools-heap';
import { pprofAdapter } from '@profkit/pprof';
import { rprofAdapter } from '@profkit/rprof';

export function webRegistry(): Registry {
  return new Registry([pprofAdapter, rprofAdapter, gperftoolsHeapAdapter, fuchsiaSampler]);
}
