/** Catching what code under test throws, for assertions on the error. */

/** What `f` throws; fails (throws a plain Error) when `f` returns normally. */
export function thrownBy<E = unknown>(f: () => unknown): E {
  try {
    f();
  } catch (e) {
    return e as E;
  }
  throw new Error('expected an error, none was thrown');
}

/** What `p` rejects with; fails (rejects with a plain Error) when `p` resolves. */
export async function rejectionOf<E = unknown>(p: Promise<unknown>): Promise<E> {
  try {
    await p;
  } catch (e) {
    return e as E;
  }
  throw new Error('expected a rejection, the promise resolved');
}

/** The `code` of what `f` throws, or undefined when it returns normally. */
export function errorCodeOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
}
