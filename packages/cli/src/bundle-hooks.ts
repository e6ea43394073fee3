/**
 * Module resolve hook registered by fast-start.ts when the start-up bundle runs and a module from
 * outside it is imported (a third-party adapter, a config file): that module's `@profkit/core` and
 * `@profkit/core/node` resolve to bridges re-exporting the bundle's core, so the process keeps one
 * core instance (one `ProfkitError` class, one registry type). Only imports that would have loaded
 * the very core the bundle was checked against are redirected; a different copy of core (another
 * version nested in an adapter's node_modules) loads as it would without the bundle.
 */

interface HookData {
  /** file: URL of core's entry -> file: URL of its bridge. */
  redirects: Record<string, string>;
  /** file: URL of core's folder (with a trailing slash): core's own imports are not redirected. */
  coreRoot: string;
}

let data: HookData = { redirects: {}, coreRoot: '' };

export function initialize(d: HookData): void {
  data = d;
}

interface ResolveResult {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}

export async function resolve(
  specifier: string,
  context: { parentURL?: string; conditions: string[] },
  nextResolve: (specifier: string, context?: unknown) => Promise<ResolveResult>,
): Promise<ResolveResult> {
  const resolved = await nextResolve(specifier, context);
  const bridge = data.redirects[resolved.url];
  if (bridge && !context.parentURL?.startsWith(data.coreRoot)) return { url: bridge, format: 'module', shortCircuit: true };
  return resolved;
}
