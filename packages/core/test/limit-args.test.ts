import { describe, expect, it } from 'vitest';
import { ErrorCodes, isProfkitError, parseLimitArgs } from '../src/node/index.js';

describe('parseLimitArgs (--limit NAME=N of the CLI and of adapter commands)', () => {
  it('reads plain numbers, exponents and size suffixes', () => {
    expect(parseLimitArgs(['maxSamples=1e3', 'maxDecompressedBytes=2GiB', 'maxStringLength=512k', 'maxFramesPerStack=7'])).toEqual({
      maxSamples: 1000,
      maxDecompressedBytes: 2 * 1024 ** 3,
      maxStringLength: 512_000,
      maxFramesPerStack: 7,
    });
    expect(parseLimitArgs(undefined)).toEqual({});
    expect(parseLimitArgs('maxSamples=5')).toEqual({ maxSamples: 5 });
  });

  it('refuses malformed pairs, unknown names and values below 1 with a usage error naming --limit', () => {
    for (const bad of ['maxSamples', 'maxWidgets=3', 'maxSamples=0', 'maxSamples=5parsecs', 'maxSamples=-1', 'constructor=5', 'toString=5', 'maxSamples=5constructor']) {
      let error: unknown;
      try {
        parseLimitArgs([bad]);
      } catch (e) {
        error = e;
      }
      expect(isProfkitError(error) && error.code, bad).toBe(ErrorCodes.USAGE);
      expect(isProfkitError(error) && error.detail.option, bad).toBe('limit');
    }
  });
});
