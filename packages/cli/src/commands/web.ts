import { spawn } from 'node:child_process';
import { ErrorCodes, ProfkitError } from '@profkit/core/node';
import type { CliCommand } from '../types.js';
import { numberOption, stringOption } from './shared.js';

/** Opens `url` in the desktop's browser; failures (no desktop, no opener) only cost the convenience. */
function openBrowser(url: string): void {
  const [command, args] = process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '', url]] : ['xdg-open', [url]];
  try {
    const child = spawn(command, args as string[], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // No opener: the URL is printed anyway.
  }
}

export const web: CliCommand = {
  name: 'web',
  summary: 'Interactive viewer in the browser: serve FILE on loopback, or write the static app (--static DIR)',
  usage: [
    'profkit web FILE [--base BASE] [--port N] [--host 127.0.0.1] [--no-open] [--source-path DIRS] [--trim-path PREFIXES]',
    'profkit web --static DIR',
    '',
    'Serves the viewer and FILE (and BASE) on http://127.0.0.1 (a free port unless --port) until',
    'Ctrl-C, and opens the page in the browser unless --no-open. The page reads the profile in a',
    'Web Worker with the same code as the CLI: top table (flat/cum, by function/file/line),',
    'flame graph and icicle (click to zoom, search), call graph, peek, sandwich, source listing,',
    'sample type switch, focus/ignore/hide/show, tag focus/ignore/root;',
    'with --base the views show FILE minus BASE (red = grew, blue = shrank), as `profkit top FILE',
    '--base BASE`. The URL keeps the view state. Only the page, the given files and the source',
    'files the profile names (looked up as `profkit list` does: --source-path, --trim-path) are',
    'served; a --host that is not a loopback address is refused unless --allow-remote.',
    '',
    '--static DIR writes the viewer as a static site (index.html, app.js, app.css) that opens',
    'profiles dropped on it or picked, entirely in the browser (also from file://).',
    '',
    'Examples:',
    '  profkit web cpu.pb.gz',
    '  profkit web new.pb.gz --base old.pb.gz --port 8080 --no-open',
    '  profkit web --static ./viewer && xdg-open viewer/index.html',
  ].join('\n'),
  options: {
    base: { type: 'string', valueName: 'FILE', description: 'show FILE minus this base profile (pprof -base), coloured red/blue' },
    port: { type: 'string', valueName: 'N', description: 'port to listen on (default: a free port)' },
    host: { type: 'string', valueName: 'ADDR', description: 'address to bind (default 127.0.0.1; loopback only unless --allow-remote)' },
    'allow-remote': { type: 'boolean', description: 'bind a --host that is not a loopback address (anyone reaching it can read the profile and the source files it names)' },
    'no-open': { type: 'boolean', description: 'do not open the page in a browser' },
    static: { type: 'string', valueName: 'DIR', description: 'write the static viewer into DIR instead of serving a file' },
    'source-path': { type: 'string', valueName: 'DIRS', description: "directories to search for the source view's files, ':'-separated (as profkit list; default the working directory)" },
    'trim-path': { type: 'string', valueName: 'PREFIXES', description: "prefixes removed from the profile's file names, ':'-separated (as profkit list)" },
  },
  positionals: [0, 1],
  json: true,
  async run(ctx) {
    // Imported here: only `profkit web` loads the server and the app's assets.
    const { startWebServer, writeStaticSite } = await import('@profkit/web');
    const dir = stringOption(ctx, 'static');
    const file = ctx.positionals[0];
    if (dir !== undefined) {
      if (file !== undefined) throw new ProfkitError(ErrorCodes.USAGE, '--static DIR writes the viewer only: it takes no FILE (open files in the page)', { option: 'static', rule: 'web --static takes no FILE' });
      const written = await writeStaticSite(dir, { signal: ctx.signal as AbortSignal });
      if (ctx.json) ctx.out.document('web', { static: dir, files: written });
      else if (!ctx.quiet) ctx.out.line(`static viewer written to ${dir} (open ${dir}/index.html)`);
      return 0;
    }
    if (file === undefined) throw new ProfkitError(ErrorCodes.USAGE, 'web needs FILE (or --static DIR), see `profkit help web`', { option: 'file', rule: 'web serves one profile' });
    const server = await startWebServer({
      profile: file,
      base: stringOption(ctx, 'base'),
      host: stringOption(ctx, 'host'),
      port: numberOption(ctx, 'port', { integer: true, max: 65535 }),
      allowRemote: ctx.values['allow-remote'] === true,
      sourcePath: stringOption(ctx, 'source-path'),
      trimPath: stringOption(ctx, 'trim-path'),
      registry: ctx.registry,
    });
    if (ctx.json) ctx.out.document('web', { file, base: stringOption(ctx, 'base') ?? null, url: server.url, host: server.host, port: server.port });
    else ctx.out.line(`profkit web: ${file} at ${server.url} (Ctrl-C to stop)`);
    if (ctx.values['no-open'] !== true) openBrowser(server.url);
    // Serves until the command is interrupted (Ctrl-C, SIGTERM, or stdout closing).
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await server.close();
    return 0;
  },
};
