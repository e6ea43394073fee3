/**
 * Registries that read and write files: `createRegistry` and `NodeRegistry` of `@profkit/core/node`
 * are the platform-neutral ones (`../registry.ts`) with Node's file access filled in, so
 * `registry.read('profile.pb.gz')`, `read('-')` (stdin) and `write(profile, path)` work.
 */

import type { Adapter } from '../adapter.js';
import { Registry, type RegistryOptions } from '../registry.js';
import { nodeFileAccess } from './files.js';

/** A registry with Node's file access (unless `options.files` names another). */
export class NodeRegistry extends Registry {
  constructor(adapters: Iterable<Adapter> = [], options: RegistryOptions = {}) {
    super(adapters, { files: nodeFileAccess, ...options });
  }
}

/** Creates a registry holding `adapters` that also reads and writes file paths (Node). */
export function createRegistry(adapters: Iterable<Adapter> = [], options: RegistryOptions = {}): Registry {
  return new NodeRegistry(adapters, options);
}
