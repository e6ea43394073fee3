import { isIP } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../src/node/index.js';

describe('isLoopbackHost', () => {
  it('accepts localhost, 127.0.0.0/8, ::1 in any spelling and IPv4-mapped loopback', () => {
    for (const h of ['localhost', 'LOCALHOST', '127.0.0.1', '127.1.2.3', '127.255.255.255', '::1', '[::1]', '0:0:0:0:0:0:0:1', '0::1', '::ffff:127.0.0.1', '::FFFF:7f00:1']) {
      expect(isLoopbackHost(h), h).toBe(true);
    }
  });

  it('rejects wildcards, other addresses, host names and malformed text', () => {
    for (const h of ['0.0.0.0', '::', '[::]', '10.0.0.1', '128.0.0.1', '::2', '1::1', '::ffff:10.0.0.1', '127.0.0.256', '127.1', '127.0.0.1.5', 'example.com', '127.0.0.1.nip.io', ':::1', '1:2:3:4:5:6:7:8:9', '']) {
      expect(isLoopbackHost(h), h).toBe(false);
    }
  });

  it('agrees with node:net on which strings are IP addresses at all (a non-address is never loopback)', () => {
    for (const h of ['127.0.0.01', '0127.0.0.1', '::1%lo', 'fe80::1', '::ffff:127.0.0.1']) {
      if (isIP(h) === 0) expect(isLoopbackHost(h), h).toBe(false);
    }
  });
});
