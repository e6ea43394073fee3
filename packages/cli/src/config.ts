/**
 * Builds the CLI's registry through core's discovery: the config file (found from the working
 * directory upwards, or `--config`), `--adapter` specifiers and opt-in `--discover`. Specifiers
 * that cannot be found from the config's folder (or the working directory) are tried from the
 * CLI's own install, so a globally installed CLI can load adapters installed beside it.
 */

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildRegistry, type BuildRegistryResult } from '@profkit/core';

/** The folder of the CLI package (resolution falls back to it). */
export function cliInstallDir(): string {
  // dist/config.js -> the package folder
  return dirname(dirname(fileURLToPath(import.meta.url)));
}

export interface RegistryFlags {
  cwd: string;
  config?: string;
  adapters: string[];
  discover: boolean;
}

export function loadRegistry(flags: RegistryFlags): Promise<BuildRegistryResult> {
  return buildRegistry({
    cwd: flags.cwd,
    config: flags.config,
    adapterSpecifiers: flags.adapters,
    discover: flags.discover,
    fallbackDirs: [cliInstallDir()],
  });
}
