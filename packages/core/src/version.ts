/**
 * The npm version of this @profkit/core, as a constant so that no platform needs to read
 * package.json at run time (a browser bundle cannot). `test/version.test.ts` fails when it differs
 * from package.json; `npm run version-packages` (changeset version, then
 * tools/scripts/sync-versions.mjs) keeps it in step.
 */
export const CORE_VERSION = '0.1.0';
