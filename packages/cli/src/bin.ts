#!/usr/bin/env node
import { main } from './cli.js';

// Writes to stdout go through CommandStdout (stdout.ts), which reports a failed write (a full
// disk, a closed pipe) as the command's error; the stream's own 'error' event must not crash
// the process with a stack trace on top of that.
process.stdout.on('error', () => undefined);

process.exitCode = await main(process.argv.slice(2), { handleSignals: true });
