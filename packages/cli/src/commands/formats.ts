import { FIRST_PARTY_FORMATS, type AdapterSource } from '@profkit/core/node';
import { table } from '../output.js';
import type { CliCommand } from '../types.js';

function sourceText(s: AdapterSource): string {
  switch (s.kind) {
    case 'programmatic':
      return 'built in';
    case 'flag':
      return `--adapter ${s.specifier ?? ''}`.trim();
    default:
      return `${s.kind} ${s.specifier ?? ''}${s.from ? ` (${s.from})` : ''}`.trim();
  }
}

export const formats: CliCommand = {
  name: 'formats',
  summary: 'List the installed adapters, their formats and whether each can be read and written',
  usage: 'profkit formats [--json]\n\nExample:\n  profkit formats',
  positionals: 0,
  json: true,
  allAdapters: true,
  async run(ctx) {
    const { registry, out } = ctx;
    const adapters = registry.list();
    if (ctx.json) {
      out.document('formats', {
        adapters: adapters.map((e) => ({
          name: e.adapter.name,
          packageName: e.adapter.packageName ?? null,
          version: e.adapter.version ?? null,
          apiVersion: e.adapter.apiVersion,
          source: e.source,
          formats: registry
            .formats()
            .filter((f) => f.adapter === e.adapter.name)
            .map((f) => ({ id: f.format.id, title: f.format.title ?? null, extensions: f.format.extensions, binary: f.format.binary, read: f.read, write: f.write })),
          commands: (e.adapter.commands ?? []).map((c) => ({ name: c.name, summary: c.summary })),
        })),
        notInstalled: firstPartyMissing(registry.formats().map((f) => f.format.id), registry.unloadedPackages),
      });
      return 0;
    }
    if (adapters.length === 0) {
      out.line('No adapters are installed.');
    } else {
      const rows = [['FORMAT', 'READ', 'WRITE', 'EXTENSIONS', 'ADAPTER', 'SOURCE']];
      for (const f of registry.formats()) {
        rows.push([
          f.format.id,
          f.read ? 'yes' : 'no',
          f.write ? 'yes' : 'no',
          f.format.extensions.join(' ') || '-',
          `${f.adapter}${f.version ? ` ${f.version}` : ''}`,
          sourceText(f.source),
        ]);
      }
      for (const l of table(rows)) out.line(l);
      const cmds = registry.commands();
      if (cmds.length) {
        out.line();
        out.line('Adapter commands:');
        for (const l of table(cmds.map((c) => [c.command.name, `${c.command.summary} (${c.adapter})`]), '  ')) out.line(l);
      }
    }
    const missing = firstPartyMissing(registry.formats().map((f) => f.format.id), registry.unloadedPackages);
    if (missing.length) {
      out.line();
      out.line('Not loaded (first-party):');
      for (const l of table(missing.map((m) => [m.formats.join(', '), m.notLoaded ? `${m.packageName} is ${m.notLoaded}` : `${m.install} (not installed)`]), '  ')) out.line(l);
      out.line('  installed adapter packages are found without configuration, unless profkit.config.json says');
      out.line('  "autoDiscover": false (then name them in its "adapters")');
    }
    return 0;
  },
};

/** First-party packages whose formats are not registered; `notLoaded` says why when one is installed. */
function firstPartyMissing(installed: string[], unloaded: ReadonlyMap<string, string>): { packageName: string; formats: string[]; install: string; notLoaded: string | null }[] {
  const have = new Set(installed);
  const byPkg = new Map<string, string[]>();
  for (const f of FIRST_PARTY_FORMATS) {
    if (have.has(f.format)) continue;
    byPkg.set(f.packageName, [...(byPkg.get(f.packageName) ?? []), f.format]);
  }
  return [...byPkg].map(([packageName, formats]) => ({ packageName, formats, install: `npm install ${packageName}`, notLoaded: unloaded.get(packageName) ?? null }));
}
