/**
 * The adapters profkit web reads with: the published platform-neutral ones (docs/browser.md),
 * in the page's Web Worker and in the server (which reads the profile for the names of the
 * source files it may serve). The example speedscope adapter (tools/adapter-example-speedscope)
 * is not one: it is not published, and it depends on the CLI, which depends on this package.
 */

import { ProfkitError, Registry, defineAdapter, type Adapter, type AdapterCodec } from '@profkit/core';
import { fuchsiaSampler } from '@profkit/fuchsia-sampler';
import { gperftoolsHeapAdapter } from '@profkit/gperftools-heap';
import { decodeProfile, pprofAdapter, type ProfileDecoder } from '@profkit/pprof';
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
 * The pprof adapter for bytes in memory (the worker's): bytes in `decodesAhead` finish their
 * decode (`ProfileDecoder.finish`), other uncompressed bytes are decoded as one buffer
 * (`decodeProfile`; the adapter's default read of more than 32 MiB is the two-pass streamed
 * decode, meant for files not held in memory, which also takes a CRC-32 of each pass: 0.4-0.7 s
 * in a browser at 100 MB). Same results and errors as the adapter's read, for the read's file
 * name and limits. Compressed input (which the platform's inflate left to core) and reads with
 * adapter options are the adapter's own. The registry around it is unchanged: format detection,
 * validation, warnings and error wrapping.
 */
function pprofFinishingAhead(decodesAhead: DecodesAhead): Adapter {
  return defineAdapter({
    ...pprofAdapter,
    load: async () => {
      const codec = (await pprofAdapter.load!()) as AdapterCodec;
      return {
        ...codec,
        async read(input, options) {
          if (input.gzipped || options.options !== undefined) return codec.read!(input, options);
          const bytes = await input.bytes();
          const decodeOptions = { file: input.fileName, limits: options.limits };
          try {
            const decoder = decodesAhead.get(bytes);
            const { profile, warnings } = decoder ? decoder.finish(bytes, decodeOptions) : decodeProfile(bytes, decodeOptions);
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
