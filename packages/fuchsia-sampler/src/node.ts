/**
 * `@profkit/fuchsia-sampler/node`: everything of the main entry, plus what needs Node: the
 * collector server (`startCollector`) and the client that replays recordings to it (sockets).
 */

export * from './index.js';
export { default } from './index.js';
export * from './server.js';
export * from './client.js';
