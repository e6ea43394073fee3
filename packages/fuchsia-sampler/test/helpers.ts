import { ProfkitError } from '@profkit/core/node';
import { expect } from 'vitest';

/** Parses the spec's hex tables: rows of "offset | bytes | meaning"; only the bytes matter. */
export function hex(rows: string): Uint8Array {
  const bytes: number[] = [];
  for (const line of rows.trim().split('\n')) {
    const t = line.trim();
    if (!t) continue;
    for (const b of t.split(/\s+/)) bytes.push(parseInt(b, 16));
  }
  return Uint8Array.from(bytes);
}

/** Expects `caught` to be a ProfkitError with `code` and returns it. */
function expectCode(caught: unknown, code: string): ProfkitError {
  expect(caught, `expected ${code}`).toBeInstanceOf(ProfkitError);
  const err = caught as ProfkitError;
  expect(err.code, err.message).toBe(code);
  return err;
}

/** Runs `f`, expects a ProfkitError with `code`, returns it for further checks. */
export function expectError(f: () => unknown, code: string): ProfkitError {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  return expectCode(caught, code);
}

/** Awaits `f`, expects it to reject with a ProfkitError with `code`, returns it. */
export async function expectRejects(f: () => Promise<unknown>, code: string): Promise<ProfkitError> {
  let caught: unknown;
  try {
    await f();
  } catch (e) {
    caught = e;
  }
  return expectCode(caught, code);
}
