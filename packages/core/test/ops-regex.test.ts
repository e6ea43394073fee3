import { describe, expect, it } from 'vitest';
import { ErrorCodes, ProfkitError, compilePattern } from '../src/node/index.js';

describe('compilePattern', () => {
  it('accepts the Go spellings pprof users write', () => {
    expect(compilePattern('(?i)MAIN', 'focus').test('xmainx')).toBe(true);
    expect(compilePattern('(?P<pkg>\\w+)\\.Run', 'focus').exec('net.Run')?.groups?.pkg).toBe('net');
    expect(compilePattern('\\Amain\\z', 'focus').test('main')).toBe(true);
    expect(compilePattern('\\Amain\\z', 'focus').test('main2')).toBe(false);
    // An escaped backslash followed by z stays a backslash and a z.
    expect(compilePattern('a\\\\z', 'focus').test('a\\z')).toBe(true);
  });

  it('anchors full-match patterns like drop_frames', () => {
    const re = compilePattern('malloc|free', 'dropFrames', true);
    expect(re.test('malloc')).toBe(true);
    expect(re.test('xmalloc')).toBe(false);
    expect(re.test('freed')).toBe(false);
  });

  it('drops the stateful g/y flags of RegExp values', () => {
    const re = compilePattern(/a/g, 'focus');
    expect(re.global).toBe(false);
    expect([re.test('a'), re.test('a')]).toEqual([true, true]);
  });

  it('reports invalid expressions as PROFKIT_E_USAGE naming the option', () => {
    try {
      compilePattern('a(', 'ignore');
      expect.unreachable();
    } catch (e) {
      expect((e as ProfkitError).code).toBe(ErrorCodes.USAGE);
      expect((e as ProfkitError).detail.option).toBe('ignore');
      expect((e as ProfkitError).message).toContain('ignore');
    }
  });
});
