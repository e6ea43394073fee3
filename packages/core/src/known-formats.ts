/**
 * Formats profkit knows by sight but no first-party adapter reads. When detection finds no
 * installed adapter for an input, the registry checks these signatures so that the error can say
 * what the file is ("this looks like a V8 CPU profile") instead of listing scores of 0.00.
 *
 * Each signature must be cheap (it sees the same ≤ 4 KiB head as the adapters' `sniff`, inflated
 * when gzip) and certain: a magic number, or the structure a format's writers always produce at
 * the start of the file. An adapter installed for one of these formats wins through the normal
 * detection; these are consulted only when no adapter claims the input.
 */

import { headText, startsWithBytes } from './sniff-util.js';

/** A format recognized by its signature (`Detection.recognized`). */
export interface RecognizedFormat {
  /** Short id, e.g. `v8-cpuprofile` (the error's `detail.format`). */
  format: string;
  /** What it is, for messages: "a V8 CPU profile (.cpuprofile JSON)". */
  name: string;
  /** Where to go instead, when there is somewhere. */
  note?: string;
}

interface KnownSignature extends RecognizedFormat {
  matches(head: Uint8Array, text: string): boolean;
}

/** The JSON text of the head without a BOM and leading white space ('' when it is not JSON-like). */
function jsonStart(text: string): string {
  const t = (text.startsWith('\u00ef\u00bb\u00bf') ? text.slice(3) : text).trimStart(); // UTF-8 BOM as latin1
  return t.startsWith('{') || t.startsWith('[') ? t : '';
}

// The perf script tests split lines into tokens rather than use one regular expression: a
// pattern like /^\S.*\s\d+…\d+\.\d+:/ backtracks for minutes on a 4 KiB line of digits.

/** `comm pid[/tid] [[cpu]] secs.usecs: [period] event:` (comm may contain spaces). */
function isPerfEventLine(line: string): boolean {
  const tok = line.trim().split(/\s+/);
  const k = tok.findIndex((x) => /^\d+\.\d+:$/.test(x));
  if (k < 2) return false;
  const pidAt = /^\[\d+\]$/.test(tok[k - 1]!) ? k - 2 : k - 1;
  if (pidAt < 1 || !/^\d+(\/\d+)?$/.test(tok[pidAt]!) || /^\s/.test(line)) return false;
  const eventAt = /^\d+$/.test(tok[k + 1] ?? '') ? k + 2 : k + 1;
  return tok[eventAt]?.endsWith(':') === true;
}

/** An indented `<hex address> symbol (dso)`. */
function isPerfFrameLine(line: string): boolean {
  if (!/^\s/.test(line)) return false;
  const t = line.trim();
  const sp = t.search(/\s/);
  return sp > 0 && /^[0-9a-f]+$/.test(t.slice(0, sp)) && t.endsWith(')') && t.includes(' (');
}

/** True when JSON text starts with an object whose first key is `key`. */
function firstKey(json: string, key: string): boolean {
  return new RegExp(`^\\{\\s*"${key}"\\s*:`).test(json);
}

const KNOWN_SIGNATURES: readonly KnownSignature[] = [
  {
    format: 'v8-cpuprofile',
    name: 'a V8 CPU profile (.cpuprofile JSON, from Chrome DevTools or node --cpu-prof)',
    note: 'it is read by @profkit/v8: run `npm install @profkit/v8` and add it to profkit.config.json\'s "adapters"',
    // {"nodes":[{"id":1,"callFrame":{…},"hitCount":…}…],"startTime":…,"samples":[…],"timeDeltas":[…]};
    // before 2016 {"head":{"functionName":…,"hitCount":…,"children":[…]},…}.
    matches: (_h, t) => {
      const j = jsonStart(t);
      return (/^\{\s*"nodes"\s*:\s*\[\s*\{/.test(j) && j.includes('"callFrame"')) || (firstKey(j, 'head') && j.includes('"hitCount"') && !j.includes('"selfSize"'));
    },
  },
  {
    format: 'v8-heapprofile',
    name: 'a V8 sampling heap profile (.heapprofile JSON, from Chrome DevTools or node --heap-prof)',
    note: 'it is read by @profkit/v8: run `npm install @profkit/v8` and add it to profkit.config.json\'s "adapters"',
    // {"head":{"callFrame":{…},"selfSize":…,"id":…,"children":[…]},"samples":[…]}
    matches: (_h, t) => {
      const j = jsonStart(t);
      return firstKey(j, 'head') && j.includes('"callFrame"') && j.includes('"selfSize"');
    },
  },
  {
    format: 'v8-heapsnapshot',
    name: 'a V8 heap snapshot (.heapsnapshot JSON), a heap dump rather than a profile',
    matches: (_h, t) => /^\{\s*"snapshot"\s*:\s*\{\s*"meta"\s*:\s*\{/.test(jsonStart(t)),
  },
  {
    format: 'chrome-trace',
    name: 'a Chrome trace event file (JSON, from chrome://tracing, DevTools Performance or Perfetto export)',
    // {"traceEvents":[…],…} (keys in any order), or the bare array [{"name":…,"ph":"X","ts":…,"pid":…},…].
    matches: (_h, t) => {
      const j = jsonStart(t);
      if (j.startsWith('{')) return /"traceEvents"\s*:\s*\[/.test(j);
      const first = /^\[\s*\{[^}]*/.exec(j)?.[0]; // the first event up to its first nested object's end
      return first !== undefined && /"ph"\s*:\s*"[A-Za-z]"/.test(first) && /"(ts|pid)"\s*:/.test(first);
    },
  },
  {
    format: 'speedscope',
    name: 'a speedscope JSON file',
    note: 'it is read by @profkit/speedscope: run `npm install @profkit/speedscope` and add it to profkit.config.json\'s "adapters"',
    matches: (_h, t) => {
      const j = jsonStart(t);
      return j.startsWith('{') && /"\$schema"\s*:\s*"[^"]*speedscope[^"]*"/.test(j);
    },
  },
  {
    format: 'perf-data',
    name: 'a Linux perf.data file (binary)',
    note: 'convert it to folded stacks (read by @profkit/rprof) with `perf script | stackcollapse-perf.pl`, or to pprof with `perf_to_profile`',
    matches: (h) => startsWithBytes(h, 'PERFILE2') || startsWithBytes(h, '2ELIFREP') || startsWithBytes(h, 'PERFFILE'),
  },
  {
    format: 'perf-script',
    name: 'Linux `perf script` text',
    note: 'it is read by @profkit/perf: run `npm install @profkit/perf` and add it to profkit.config.json\'s "adapters"',
    // An event line `comm pid[/tid] [cpu] secs.usecs: [period] event:` followed by a frame line
    // `\t<hex address> symbol (dso)`; `#` lines come first with --header.
    matches: (_h, t) => {
      const lines = t.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
      for (let i = 0; i + 1 < lines.length && i < 8; i++) if (isPerfEventLine(lines[i]!) && isPerfFrameLine(lines[i + 1]!)) return true;
      return false;
    },
  },
  {
    format: 'jfr',
    name: 'a Java Flight Recorder recording (.jfr)',
    note: 'convert it with `jfr print`, or with async-profiler\'s converter to pprof or collapsed stacks',
    matches: (h) => startsWithBytes(h, new Uint8Array([0x46, 0x4c, 0x52, 0x00])),
  },
  {
    format: 'hprof',
    name: 'a Java HPROF heap dump, a heap dump rather than a profile',
    matches: (h) => startsWithBytes(h, 'JAVA PROFILE 1.0.'),
  },
  {
    format: 'go-trace',
    name: 'a Go execution trace (go test -trace, runtime/trace), which `go tool trace` reads',
    note: '`go tool trace -pprof=TYPE trace.out > TYPE.pprof` extracts pprof profiles from it',
    matches: (_h, t) => /^go 1\.\d+ trace\0/.test(t),
  },
  {
    format: 'callgrind',
    name: 'a Valgrind callgrind/cachegrind profile',
    matches: (_h, t) => t.startsWith('# callgrind format') || (/^(version|creator|cmd|pid|positions|events):/m.test(t) && /^creator: \S*grind/m.test(t)),
  },
  {
    format: 'nettrace',
    name: 'a .NET EventPipe trace (.nettrace)',
    matches: (h) => startsWithBytes(h, 'Nettrace'),
  },
];

/** The known format `head` (inflated if gzip) looks like, or undefined. */
export function recognizeKnownFormat(head: Uint8Array): RecognizedFormat | undefined {
  if (head.length === 0) return undefined;
  const text = headText(head);
  for (const s of KNOWN_SIGNATURES) {
    if (s.matches(head, text)) {
      const r: RecognizedFormat = { format: s.format, name: s.name };
      if (s.note !== undefined) r.note = s.note;
      return r;
    }
  }
  return undefined;
}
