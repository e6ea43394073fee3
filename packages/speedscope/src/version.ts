/**
 * This package's npm version, as a constant so that no platform needs to read package.json at run
 * time (a browser bundle cannot). `npm run version-packages` (changeset version, then
 * tools/scripts/sync-versions.mjs) keeps it in step with package.json;
 * tools/release-check/test/versions.test.ts fails when they differ.
 */
export const PACKAGE_VERSION = '0.1.0';
