#!/usr/bin/env node
// The former `profkit` launcher, kept for links made to it before the bin became bin/profkit.cjs
// (a workspace's node_modules/.bin until its next `npm install`). Forwards to that launcher.
import { createRequire } from 'node:module';

createRequire(import.meta.url)('./profkit.cjs');
