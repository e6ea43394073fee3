/**
 * The other side of the browser bundles' static imports: on Node, an adapter's main entry still
 * loads its Node-only code (gperftools-heap's and fuchsia-sampler's commands with their servers
 * and sockets, v8's source-map file reader) only when a command or the transform runs. The
 * entries import that code through a package `imports` entry whose `node` target is a small
 * module that loads it on first use (`#node-commands`, `#node-source-maps`), so the CLI reading a
 * profile loads no more than it did with a dynamic `import()` in the entry.
 */

import { runWithModuleLog } from '@profkit/test-utils';
import { describe, expect, it } from 'vitest';

/** [package, the module standing in on Node (loaded), the Node-only modules it defers (not loaded)]. */
const DEFERRED: [string, string, string[]][] = [
  ['@profkit/gperftools-heap', 'packages/gperftools-heap/dist/remote/commands-lazy.js', ['packages/gperftools-heap/dist/remote/commands.js', 'packages/gperftools-heap/dist/remote/server.js']],
  ['@profkit/fuchsia-sampler', 'packages/fuchsia-sampler/dist/commands-lazy.js', ['packages/fuchsia-sampler/dist/commands.js', 'packages/fuchsia-sampler/dist/server.js']],
  ['@profkit/v8', 'packages/v8/dist/source-map-files-lazy.js', ['packages/v8/dist/source-map-files.js']],
];

describe('main entries on Node: Node-only code loads when it is used', () => {
  it.each(DEFERRED)('%s: importing the entry and loading its codec loads %s, not the code it defers', (pkg, standIn, deferred) => {
    const script = `const { default: adapter } = await import('${pkg}'); await adapter.load();`;
    const { status, stderr, urls } = runWithModuleLog(['--input-type=module', '-e', script]);
    expect(status, stderr).toBe(0);
    // The stand-in is loaded: the module log sees the package's files (the assertion below could fail).
    expect(urls.filter((u) => u.endsWith(`/${standIn}`))).toHaveLength(1);
    expect(urls.filter((u) => deferred.some((d) => u.endsWith(`/${d}`)))).toEqual([]);
  });
});
