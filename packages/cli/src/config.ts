/**
 * Builds the CLI's registry through core's discovery: the config file (found from the working
 * directory upwards, or `--config`), `--adapter` specifiers, then the installed adapter packages
 * (zero-config discovery, on unless `"autoDiscover": false` or `--no-discover`). Specifiers that
 * cannot be found from the config's folder (or the working directory) are tried from the CLI's
 * own install, and discovery searches the CLI's own `node_modules` tree too, so a globally
 * installed CLI finds adapters installed beside it.
 */

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildRegistry, type BuildRegistryResult, type DiscoveryCache } from '@profkit/core/node';

/** The folder of the CLI package (resolution falls back to it). */
export function cliInstallDir(): string {
  // dist/config.js -> the package folder
  return dirname(dirname(fileURLToPath(import.meta.url)));
}

export interface RegistryFlags {
  cwd: string;
  config?: string;
  adapters: string[];
  /** `--discover` (true), `--no-discover` (false), neither (undefined: the config decides, default on). */
  discover?: boolean;
  /** Register discovered adapters that declare themselves in package.json lazily (core's `lazy`). */
  lazy?: boolean;
  /** Remembers what discovery found in each node_modules folder between runs (core's `DiscoveryCache`). */
  discoveryCache?: DiscoveryCache;
}

export function loadRegistry(flags: RegistryFlags): Promise<BuildRegistryResult> {
  return buildRegistry({
    cwd: flags.cwd,
    config: flags.config,
    adapterSpecifiers: flags.adapters,
    discover: flags.discover,
    lazy: flags.lazy,
    fallbackDirs: [cliInstallDir()],
    discoveryCache: flags.discoveryCache,
  });
}
