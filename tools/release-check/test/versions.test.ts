/**
 * Every package reports the version in its package.json. The reported version comes from one
 * constant per package, `src/version.ts` (core's `CORE_VERSION`, the adapters' `PACKAGE_VERSION`
 * in their adapter objects), which `npm run version-packages` (changeset version, then
 * tools/scripts/sync-versions.mjs) rewrites; a version written anywhere else would still say
 * 0.1.0 after `changeset version`.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '@profkit/test-utils';
import { describe, expect, it } from 'vitest';

const SYNC_SCRIPT = join(repoRoot, 'tools', 'scripts', 'sync-versions.mjs');

interface WorkspacePackage {
  dir: string;
  name: string;
  version: string;
}

/** Workspace packages with sources: packages/* and tools/*. */
const workspace: WorkspacePackage[] = ['packages', 'tools'].flatMap((group) =>
  readdirSync(join(repoRoot, group))
    .map((folder) => join(repoRoot, group, folder))
    .filter((dir) => existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'src')))
    .map((dir) => {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; version: string };
      return { dir, name: pkg.name, version: pkg.version };
    }),
);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** `version: '1.2.3'` in an object literal: an adapter's version written by hand. */
const LITERAL_VERSION = /^\s*version:\s*['"`]\d+\.\d+\.\d+[^'"`]*['"`]/m;

/** The version constant of a src/version.ts (`export const …VERSION = '…';`). */
function versionConstant(file: string): string | undefined {
  return /^export const [A-Z][A-Z0-9_]*VERSION = '([^']*)';$/m.exec(readFileSync(file, 'utf8'))?.[1];
}

describe('package versions come from one place', () => {
  it.each(workspace.map((p) => [p.name, p] as const))('%s: no version written by hand in its sources', (_name, p) => {
    const handWritten = sourceFiles(join(p.dir, 'src')).filter((f) => LITERAL_VERSION.test(readFileSync(f, 'utf8')));
    expect(handWritten.map((f) => relative(repoRoot, f)), 'use PACKAGE_VERSION from src/version.ts').toEqual([]);
  });

  it.each(workspace.filter((p) => existsSync(join(p.dir, 'src', 'version.ts'))).map((p) => [p.name, p] as const))('%s: src/version.ts says its package.json version', (_name, p) => {
    expect(versionConstant(join(p.dir, 'src', 'version.ts'))).toBe(p.version);
  });

  it('every adapter object reports its package.json version (built main entries)', async () => {
    const reported: Record<string, unknown> = {};
    const expected: Record<string, string> = {};
    for (const p of workspace) {
      const entry = join(p.dir, 'dist', 'index.js');
      if (!existsSync(join(p.dir, 'src', 'version.ts')) || !existsSync(entry)) continue;
      const mod = (await import(pathToFileURL(entry).href)) as { default?: { apiVersion?: unknown; version?: unknown } };
      if (typeof mod.default?.apiVersion !== 'number') continue; // not an adapter package (core)
      reported[p.name] = mod.default.version;
      expected[p.name] = p.version;
    }
    expect(Object.keys(reported).length).toBeGreaterThanOrEqual(6);
    expect(reported).toEqual(expected);
  });
});

describe('tools/scripts/sync-versions.mjs', () => {
  function scratch(): string {
    const root = mkdtempSync(join(tmpdir(), 'profkit-versions-'));
    const pkg = (group: string, folder: string, version: string, versionTs?: string) => {
      mkdirSync(join(root, group, folder, 'src'), { recursive: true });
      writeFileSync(join(root, group, folder, 'package.json'), JSON.stringify({ name: `@x/${folder}`, version }));
      if (versionTs !== undefined) writeFileSync(join(root, group, folder, 'src', 'version.ts'), versionTs);
    };
    pkg('packages', 'core', '0.2.0', "/** doc */\nexport const CORE_VERSION = '0.1.0';\n");
    pkg('packages', 'adapter', '1.0.0-next.1', "export const PACKAGE_VERSION = '0.1.0';\n");
    pkg('packages', 'plain', '3.0.0');
    pkg('tools', 'example', '0.1.1', "export const PACKAGE_VERSION = '0.1.0';\n");
    return root;
  }

  it('writes each package.json version into its src/version.ts', () => {
    const root = scratch();
    try {
      const r = spawnSync(process.execPath, [SYNC_SCRIPT, root], { encoding: 'utf8' });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(readFileSync(join(root, 'packages', 'core', 'src', 'version.ts'), 'utf8')).toBe("/** doc */\nexport const CORE_VERSION = '0.2.0';\n");
      expect(versionConstant(join(root, 'packages', 'adapter', 'src', 'version.ts'))).toBe('1.0.0-next.1');
      expect(versionConstant(join(root, 'tools', 'example', 'src', 'version.ts'))).toBe('0.1.1');
      expect(existsSync(join(root, 'packages', 'plain', 'src', 'version.ts'))).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('fails on a src/version.ts without a version constant', () => {
    const root = scratch();
    try {
      writeFileSync(join(root, 'packages', 'adapter', 'src', 'version.ts'), 'export const version = 1;\n');
      const r = spawnSync(process.execPath, [SYNC_SCRIPT, root], { encoding: 'utf8' });
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain('no `export const …VERSION');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('is what npm run version-packages runs after changeset version', () => {
    const scripts = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['version-packages']).toBe('changeset version && node tools/scripts/sync-versions.mjs');
  });
});
