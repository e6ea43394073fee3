#!/usr/bin/env node
// The CLI's entry is dist/bin.cjs (src/bin.cts; the `profkit` launcher runs it). This file keeps
// `node dist/bin.js` working for whoever runs that path; it pays for Node's ES module loader.
import './bin.cjs';
