// Writes the screenshots of docs/web.md (docs/images/web-<view>.png) with the browser tests'
// own code: runs test/browser.test.ts with PROFKIT_WEB_DOC_SCREENSHOTS set, so that each view's
// test also saves its view there (see docShot in the test). `npm run screenshots -w @profkit/web`
// after `npm run build`; needs Chromium and the shared fixtures, as the tests do.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const images = join(root, '../../docs/images');
const r = spawnSync('npx', ['vitest', 'run', 'test/browser.test.ts'], {
  cwd: root,
  stdio: 'inherit',
  shell: process.platform === 'win32',
  env: { ...process.env, PROFKIT_WEB_DOC_SCREENSHOTS: images },
});
process.exit(r.status ?? 1);
