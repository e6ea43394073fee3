#!/usr/bin/env node
import { main } from './cli.js';

// A closed pipe (`profkit formats | head -1`) is not an error.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});

process.exitCode = await main(process.argv.slice(2), { handleSignals: true });
