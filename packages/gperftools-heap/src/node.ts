/**
 * `@profkit/gperftools-heap/node`: everything of the main entry, plus what needs Node: fetching
 * profiles and symbols over HTTP (`fetchProfile`, `symbolizeRemote`) and the profile server
 * (`createProfileServer`).
 */

export * from './index.js';
export { default } from './index.js';
export { fetchProfile } from './remote/fetch.js';
export { httpRequest, symbolizeRemote, symbolizeRemoteCounted } from './remote/http.js';
export type { HttpRequestOptions, SymbolizeRemoteOptions, SymbolizeRemoteResult } from './remote/http.js';
export { createProfileServer } from './remote/server.js';
export type { ProfileServer } from './remote/server.js';
