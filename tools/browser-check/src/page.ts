/**
 * The page of the Chromium check that reads every format: core and every platform-neutral
 * adapter in one bundle (src/page-top.ts does the reading). The check also bundles a page per
 * adapter, with that adapter only (test/chromium.test.ts).
 */

import { fuchsiaSampler } from '@profkit/fuchsia-sampler';
import { gperftoolsHeapAdapter } from '@profkit/gperftools-heap';
import { pprofAdapter } from '@profkit/pprof';
import { rprofAdapter } from '@profkit/rprof';
import { perfAdapter } from '@profkit/perf';
import { speedscopeAdapter } from '@profkit/speedscope';
import { v8Adapter } from '@profkit/v8';
import { installProfkitTop } from './page-top.js';

installProfkitTop([pprofAdapter, rprofAdapter, gperftoolsHeapAdapter, fuchsiaSampler, speedscopeAdapter, perfAdapter, v8Adapter]);
