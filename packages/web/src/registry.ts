/**
 * The adapters profkit web reads with: the published platform-neutral ones (docs/browser.md),
 * in the page's Web Worker and in the server (which reads the profile for the names of the
 * source files it may serve). The example speedscope adapter (tools/adapter-example-speedscope)
 * is not one: it is not published, and it depends on the CLI, which depends on this package.
 */

import { ProfkitError, Registry, defineAdapter, type Adapter, type AdapterCodec } from '@profkit/core';
import { fuchsiaSampler } from '@profkit/fuchsia-sampler';
import { gperftoolsHeapAdapter } from '@profkit/gperftools-heap';
import { pprofAdapter, type ProfileDecoder } from '@profkit/pprof';
import { rprofAdapter } from '@profkit/rprof';

/**
 * The decode the worker started on a profile's bytes while they arrived (`ProfileDecoder`, pass 1
 * run on each inflated chunk), by those bytes: the registry's pprof read finishes it instead of
 * decoding them from the start.
 */
export type DecodesAhead = ReadonlyMap<Uint8Array, ProfileDecoder>;

export function webRegistry(decodesAhead?: DecodesAhead): Registry {
  return new Registry([decodesAhead ? pprofFinishingAhead(decodesAhead) : pprofAdapter, rprofAdapter, gperftoolsHeapAdapter, fuchsiaSampler]);
}

/**
 * The pprof adapter whose read of bytes in `decodesAhead` finishes their decode
 * (`ProfileDecoder.finish`: `decodeProfile`'s result and errors, for the read's file name and
 * limits); every other read is the adapter's own. The registry around it is unchanged: format
 * detection, validation, warnings and error wrapping.
 */
function pprofFinishingAhead(decodesAhead: DecodesAhead): Adapter {
  return defineAdapter({
    ...pprofAdapter,
    load: async () => {
      const codec = (await pprofAdapter.load!()) as AdapterCodec;
      return {
        ...codec,
        async read(input, options) {
          // Bytes handed over inflated are read as they are: those of a decode ahead are such bytes.
          const decoder = decodesAhead.size > 0 && !input.gzipped ? decodesAhead.get(await input.bytes()) : undefined;
          if (!decoder) return codec.read!(input, options);
          try {
            const { profile, warnings } = decoder.finish(await input.bytes(), { file: input.fileName, limits: options.limits });
            return { profile, warnings, format: 'pprof' };
          } catch (e) {
            // As the adapter's read: its errors name the file.
            if (e instanceof ProfkitError && e.detail.file === undefined) throw e.withDetail({ file: input.fileName });
            throw e;
          }
        },
      };
    },
  });
}
