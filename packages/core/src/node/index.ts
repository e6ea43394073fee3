/**
 * `@profkit/core/node`: everything of `@profkit/core`, plus what needs Node: reading files and
 * stdin, atomic writes, stdout, adapter discovery (node_modules, config files), and a
 * `createRegistry` whose registries read and write paths. Import this entry in programs that run
 * on Node (CLIs, servers, tests); the main entry stays usable in browsers.
 */

export * from '../index.js';
export * from './io.js';
export { nodeFileAccess } from './files.js';
export { NodeRegistry, createRegistry } from './registry.js';
export { sourceFileReader, listedSourceNames, goErrnoText, MAX_SOURCE_FILE_BYTES, MAX_SOURCE_FILE_LINES } from './source-files.js';
export * from '../discovery.js';
