/**
 * The page: opens a profile (served by `profkit web FILE`, named in the page's
 * `#profkit-config`; or picked / dropped by the user in the static build), hands its bytes to the
 * Web Worker and shows what the worker computes: the top table, the canvas flame graph/icicle,
 * peek, sandwich, the call graph (laid out by graph.js, loaded on first use) and the source
 * listing. The view state lives in the URL hash (state.ts). The page itself fetches nothing but
 * the served profile(s), graph.js and (served) the source files; the worker is made from source
 * bundled into this script.
 */

import { render } from 'preact';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { DEFAULT_LIMITS, ErrorCodes, ProfkitError, formatPercentage, formatValue, isProfkitError } from '@profkit/core';
import { drawFlame, flameHeight, frameAt, frameAtPath, matchedTotal, parentsOf, pathOf, searchMatchesInSlices, type FlameDrawOptions } from './flame.js';
import type { GraphLayout } from './graph-layout.js';
import type { FlameLayout, GraphView, LoadedInfo, PeekCall, PeekView, ProfileInput, SandwichView, SourceAccess, SourceRoutine, SourceView, TopRow, TopView, ViewPart, ViewResult, WorkerRequest, WorkerResponse } from './protocol.js';
import { INFLATED_HEADER, INFLATED_PARAM, INFLATED_SIZE_HEADER } from './protocol.js';
import { inputSizeError } from './native-gunzip.js';
import { MAX_SEARCH_STEPS } from './patterns.js';
import { FILTER_KEYS, exactPattern, hashOf, stateFromHash, viewOptionsOf, type ViewState } from './state.js';

/** The worker's bundled source (scripts/build-app.mjs defines it). */
declare const __PROFKIT_WORKER_SOURCE__: string;

/** What `profkit web` puts in the page: where to fetch the profile (and base) from. */
interface ServedConfig {
  profile: { name: string; url: string };
  base?: { name: string; url: string };
  /** Where the source view's files are served (`url` relative to the page). */
  source?: SourceAccess;
}

function servedConfig(): ServedConfig | undefined {
  const el = document.getElementById('profkit-config');
  return el?.textContent ? (JSON.parse(el.textContent) as ServedConfig) : undefined;
}

/** The served profile(s), or undefined in the static build. */
const SERVED = servedConfig();

/** The worker, and requests to it as promises (answers to superseded requests are dropped by the callers). */
class Analysis {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, (r: WorkerResponse) => void>();

  constructor() {
    const url = URL.createObjectURL(new Blob([__PROFKIT_WORKER_SOURCE__], { type: 'text/javascript' }));
    this.worker = new Worker(url);
    this.worker.onmessage = (e: MessageEvent<WorkerResponse>) => {
      this.pending.get(e.data.id)?.(e.data);
      this.pending.delete(e.data.id);
    };
    // A worker that dies (out of memory, an uncaught error) answers nothing more: every waiting
    // and later request gets an error, so the page says so instead of staying "computing…".
    this.worker.onerror = (e: ErrorEvent) => {
      e.preventDefault();
      this.dead = `the analysis worker stopped: ${e.message || 'it crashed (out of memory?)'}; reload the page`;
      for (const [id, resolve] of this.pending) resolve({ kind: 'error', id, code: 'PROFKIT_E_INTERNAL', message: this.dead });
      this.pending.clear();
    };
  }

  /** Why the worker no longer answers, once it has died. */
  private dead: string | undefined;

  private ask(req: WorkerRequest, transfer: Transferable[] = []): Promise<WorkerResponse> {
    return new Promise((resolve) => {
      if (this.dead !== undefined) return resolve({ kind: 'error', id: req.id, code: 'PROFKIT_E_INTERNAL', message: this.dead });
      this.pending.set(req.id, resolve);
      this.worker.postMessage(req, transfer);
    });
  }

  load(profile: ProfileInput, base?: ProfileInput): Promise<WorkerResponse> {
    // The worker runs from a blob: URL: it needs the source URL absolute.
    const s = SERVED?.source;
    const source = s ? { ...s, ...(s.url !== undefined ? { url: new URL(s.url, location.href).href } : {}) } : undefined;
    const transfer = [profile, base].flatMap((input) => (input ? ['bytes' in input ? input.bytes : input.stream] : []));
    return this.ask({ kind: 'load', id: this.nextId++, profile, base, source }, transfer);
  }

  view(state: ViewState, part: ViewPart): Promise<WorkerResponse> {
    return this.ask({ kind: 'view', id: this.nextId++, options: viewOptionsOf(state), part, fn: state.fn });
  }

  /**
   * Hands the worker the text of a source file the user dropped or picked, once: it keeps it for
   * the profile (the views after it, in order, see it). Not answered.
   */
  addSource(file: string, text: string): void {
    if (this.dead === undefined) this.worker.postMessage({ kind: 'source', id: this.nextId++, file, text } satisfies WorkerRequest);
  }
}

/**
 * The served profile: a gzip file asked for inflated by the server (see INFLATED_PARAM), which the
 * worker reads as raw profile bytes, falling back to the file's own bytes if that fails; the
 * file's bytes as they are otherwise (not gzip: the server sends them; the request failing: asked again).
 */
async function fetchInput(spec: { name: string; url: string }): Promise<ProfileInput> {
  if (CAN_TRANSFER_STREAMS) {
    const response = await fetch(`${spec.url}?${INFLATED_PARAM}=1`).catch(() => undefined);
    if (response?.ok && response.body && response.headers.get(INFLATED_HEADER) === '1') {
      const inflatedSize = Number(response.headers.get(INFLATED_SIZE_HEADER) ?? 0);
      return { name: spec.name, stream: response.body, size: 0, ...(inflatedSize > 0 ? { inflatedSize } : {}), originalUrl: new URL(spec.url, location.href).href };
    }
    if (response?.ok) return inputOfResponse(spec.name, response);
    await response?.body?.cancel();
  }
  return inputOfResponse(spec.name, await fetch(spec.url));
}

/** A profile from the response that serves its file's bytes. */
async function inputOfResponse(name: string, response: Response): Promise<ProfileInput> {
  if (!response.ok) throw new Error(`${name}: HTTP ${response.status}`);
  const size = Number(response.headers.get('content-length') ?? 0);
  checkInputSize(name, size);
  // The body goes to the worker as it arrives (it inflates while it downloads), where streams can be transferred.
  const inflatedSize = Number(response.headers.get(INFLATED_SIZE_HEADER) ?? 0);
  if (response.body && CAN_TRANSFER_STREAMS) return { name, stream: response.body, size, ...(inflatedSize > 0 ? { inflatedSize } : {}) };
  return { name, bytes: await response.arrayBuffer() };
}

/** Whether this browser can hand a ReadableStream to a worker (Chromium, Firefox; not every Safari). */
const CAN_TRANSFER_STREAMS = (() => {
  try {
    const probe = new ReadableStream();
    structuredClone(probe, { transfer: [probe] });
    return true;
  } catch {
    return false;
  }
})();

/** Core's input limit, checked on the size before the bytes are read into the page's memory. */
function checkInputSize(name: string, size: number): void {
  if (size > DEFAULT_LIMITS.maxInputBytes) throw inputSizeError(name, `${size} bytes`, DEFAULT_LIMITS.maxInputBytes);
}

/** A picked or dropped file's bytes. */
async function fileInput(file: File): Promise<ProfileInput> {
  checkInputSize(file.name, file.size);
  return { name: file.name, bytes: await file.arrayBuffer() };
}

/**
 * A source file larger than this is refused before it is read into the page (core's
 * MAX_SOURCE_FILE_BYTES for `profkit list`; its `node` entry cannot be loaded in a browser).
 */
const MAX_SOURCE_FILE_BYTES = 256 << 20;

/** Refuses a source file the user dropped or picked past MAX_SOURCE_FILE_BYTES, before it is read. */
function checkSourceFileSize(file: File): void {
  if (file.size > MAX_SOURCE_FILE_BYTES) {
    throw new ProfkitError(ErrorCodes.LIMIT, `${file.name}: source file is ${file.size} bytes, above the limit of ${MAX_SOURCE_FILE_BYTES}`, { file: file.name, option: 'maxSourceFileBytes' });
  }
}

/** The last part of a path (profiles name files with / or \\). */
function baseNameOf(path: string): string {
  return path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1);
}

/** A failure to read a picked or dropped file, as the page's error status. */
function readErrorStatus(e: unknown): { kind: 'error'; code: string; message: string } {
  return { kind: 'error', code: isProfkitError(e) ? e.code : 'PROFKIT_E_IO', message: e instanceof Error ? e.message : String(e) };
}

/**
 * What a part of the view depends on: the flame graph not on the table's granularity and sort,
 * peek (untrimmed) not on --node-fraction, the sandwich only on the function and the filters.
 */
function partKey(state: ViewState, part: ViewPart, droppedSources: Record<string, number>): string {
  const { by, cum, nodeFraction, nodeCount, ...flameOptions } = viewOptionsOf(state);
  if (part === 'top') return JSON.stringify({ ...flameOptions, by, cum, nodeFraction });
  if (part === 'peek') return JSON.stringify({ ...flameOptions, by, cum, fn: state.fn });
  if (part === 'sandwich') return JSON.stringify({ ...flameOptions, fn: state.fn });
  if (part === 'graph') return JSON.stringify({ ...flameOptions, by, nodeFraction, nodeCount });
  if (part === 'source') return JSON.stringify({ ...flameOptions, fn: state.fn, droppedSources });
  return JSON.stringify(flameOptions);
}

/** The part of the analysis a view shows. */
function partOf(state: ViewState): ViewPart {
  return state.view === 'icicle' ? 'flame' : state.view;
}

/** The views about one function (the `fn` of the state). */
const FUNCTION_PARTS: readonly ViewPart[] = ['peek', 'sandwich', 'source'];

/** A computed part with the key it was computed for. */
interface Computed<T> {
  key: string;
  result: ViewResult & T;
}

type Status = { kind: 'empty' } | { kind: 'busy'; text: string } | { kind: 'error'; code: string; message: string } | { kind: 'ready' };

function App() {
  const analysis = useMemo(() => new Analysis(), []);
  const [state, setState] = useState<ViewState>(() => stateFromHash(location.hash));
  const [status, setStatus] = useState<Status>({ kind: 'empty' });
  const [info, setInfo] = useState<LoadedInfo>();
  const [names, setNames] = useState<{ profile: string; base?: string }>();
  const [top, setTop] = useState<Computed<{ top: TopView }>>();
  const [flame, setFlame] = useState<Computed<{ flame: FlameLayout }>>();
  const [peek, setPeek] = useState<Computed<{ peek: PeekView }>>();
  const [sandwich, setSandwich] = useState<Computed<{ sandwich: SandwichView }>>();
  const [graph, setGraph] = useState<Computed<{ graph: GraphView }>>();
  const [source, setSource] = useState<Computed<{ source: SourceView }>>();
  /** Source files the user dropped for the source view (static build), text by the listing's file name. */
  /**
   * Source files the user dropped for the source view (static build): the number of times each
   * was handed to the worker (which keeps the text), by the listing's file name; the source view
   * is computed again when it changes.
   */
  const [droppedSources, setDroppedSources] = useState<Record<string, number>>({});
  const latest = useRef(0);
  /**
   * Each `open` is a new generation: what was started for an earlier one (a dropped source file
   * still being read) is dropped when it ends, not given to the profile loaded since.
   */
  const loadGeneration = useRef(0);
  const [loadCount, setLoadCount] = useState(0);
  const [pendingBase, setPendingBase] = useState<ProfileInput>();

  // The hash follows the state (replaceState: no history entry per keystroke), and back/forward or an edited URL the other way.
  useEffect(() => {
    const h = hashOf(state);
    if (h !== location.hash && !(h === '' && location.hash === '')) history.replaceState(null, '', h === '' ? location.pathname + location.search : h);
  }, [state]);
  useEffect(() => {
    const onHash = () => setState(stateFromHash(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);

  async function open(profile: ProfileInput, base?: ProfileInput) {
    const generation = ++loadGeneration.current;
    setStatus({ kind: 'busy', text: `reading ${profile.name}${base ? ` and ${base.name}` : ''}…` });
    setTop(undefined);
    setFlame(undefined);
    setPeek(undefined);
    setSandwich(undefined);
    setGraph(undefined);
    setSource(undefined);
    setDroppedSources({});
    const r = await analysis.load(profile, base);
    // A profile opened since: the worker answers loads in order, so this one's answer (its
    // summary, sample types, error) arrives while the newer one is read, and is not the page's.
    if (generation !== loadGeneration.current) return;
    // The benchmark's split of the first paint: fetched, read by the worker, flame graph drawn.
    performance.mark('profkit:profile-read');
    if (r.kind === 'error') {
      setStatus({ kind: 'error', code: r.code, message: r.message });
      return;
    }
    if (r.kind !== 'loaded') return;
    setInfo(r.info);
    setNames({ profile: profile.name, base: base?.name });
    setLoadCount((n) => n + 1);
  }

  /**
   * Profiles being read (fetched, picked or dropped), in the order started: returns whether the
   * one started now is still the latest, so that a read ending after a later one's (a larger
   * file) is not opened over it: the last profile given wins.
   */
  const profileReads = useRef(0);
  const startProfileRead = () => {
    const started = ++profileReads.current;
    return () => started === profileReads.current;
  };

  useEffect(() => {
    const config = SERVED;
    if (!config) return;
    const latest = startProfileRead();
    (async () => {
      try {
        const [p, b] = await Promise.all([fetchInput(config.profile), config.base ? fetchInput(config.base) : Promise.resolve(undefined)]);
        performance.mark('profkit:profile-fetched');
        if (latest()) await open(p, b);
      } catch (e) {
        if (latest()) setStatus(readErrorStatus(e));
      }
    })();
  }, []);

  // A file dropped on the source view whose name is that of a listed file without text is its source.
  const dropSource = useRef<(files: File[]) => boolean>(() => false);
  dropSource.current = (files) => {
    if (state.view !== 'source' || !source) return false;
    const wanted = source.result.source.routines.filter((r) => r.noText && r.file !== '');
    const matched = files.flatMap((f) => wanted.filter((r) => baseNameOf(r.file) === f.name).map((r) => [r.file, f] as const));
    if (matched.length === 0) return false;
    readSources(matched);
    return true;
  };
  const readSources = (files: (readonly [string, File])[]) => {
    const generation = loadGeneration.current;
    const current = () => generation === loadGeneration.current;
    void (async () => {
      // Every size checked first (all the files or none), then one file read at a time and handed
      // to the worker as soon as it is read: the page holds one text (up to 256 MiB), not all of
      // them at once; the view is computed again once, after the last.
      for (const [, f] of files) checkSourceFileSize(f);
      const sent: string[] = [];
      try {
        for (const [file, f] of files) {
          const text = await f.text();
          // Read for a profile that another one replaced meanwhile: not the new profile's source.
          if (!current()) return;
          analysis.addSource(file, text);
          sent.push(file);
        }
      } finally {
        if (current() && sent.length > 0) setDroppedSources((d) => ({ ...d, ...Object.fromEntries(sent.map((file) => [file, (d[file] ?? 0) + 1])) }));
      }
    })().catch((err: unknown) => {
      if (current()) setStatus(readErrorStatus(err));
    });
  };

  // Drag-and-drop anywhere on the page: the first file is the profile, a second one its base
  // (on the source view, a file named as a listed source file is that file's text).
  useEffect(() => {
    const over = (e: DragEvent) => e.preventDefault();
    const drop = (e: DragEvent) => {
      e.preventDefault();
      const files = [...(e.dataTransfer?.files ?? [])];
      if (files.length === 0 || dropSource.current(files)) return;
      const latest = startProfileRead();
      void Promise.all(files.slice(0, 2).map(fileInput)).then(
        ([p, b]) => (latest() ? open(p!, b) : undefined),
        (err: unknown) => latest() && setStatus(readErrorStatus(err)),
      );
    };
    addEventListener('dragover', over);
    addEventListener('drop', drop);
    return () => {
      removeEventListener('dragover', over);
      removeEventListener('drop', drop);
    };
  }, []);

  // The part the view shows, computed when its options change (the search and the zoom are drawn
  // here, not computed by the worker); a part already computed for these options is kept.
  const part = partOf(state);
  const key = partKey(state, part, droppedSources);
  const computed = { top, flame, peek, sandwich, graph, source }[part];
  const needsFunction = FUNCTION_PARTS.includes(part) && state.fn === '';
  useEffect(() => {
    if (loadCount === 0 || needsFunction || computed?.key === key) return;
    const id = ++latest.current;
    setStatus({ kind: 'busy', text: 'computing…' });
    void analysis.view(state, part).then((r) => {
      if (id !== latest.current) return;
      if (r.kind === 'error') setStatus({ kind: 'error', code: r.code, message: r.message });
      else if (r.kind === 'view') {
        if (r.result.top) setTop({ key, result: { ...r.result, top: r.result.top } });
        if (r.result.flame) setFlame({ key, result: { ...r.result, flame: r.result.flame } });
        if (r.result.peek) setPeek({ key, result: { ...r.result, peek: r.result.peek } });
        if (r.result.sandwich) setSandwich({ key, result: { ...r.result, sandwich: r.result.sandwich } });
        if (r.result.graph) setGraph({ key, result: { ...r.result, graph: r.result.graph } });
        if (r.result.source) setSource({ key, result: { ...r.result, source: r.result.source } });
        setStatus({ kind: 'ready' });
      }
    });
  }, [key, part, loadCount]);

  const update = (patch: Partial<ViewState>) => setState((s) => ({ ...s, ...patch }));

  return (
    <div class="app">
      <header>
        <h1>profkit</h1>
        <OpenControls
          startProfileRead={startProfileRead}
          onProfile={(p) => void open(p, pendingBase)}
          onBase={(b) => setPendingBase(b)}
          onError={(err) => setStatus(readErrorStatus(err))}
          served={SERVED !== undefined}
        />
        {names && info && (
          <p id="profile-summary">
            <b>{names.profile}</b> ({info.format}{names.base ? `, minus ${names.base} (${info.baseFormat})` : ''}), {info.samples.toLocaleString('en-US')} samples
          </p>
        )}
      </header>
      {status.kind === 'empty' && !SERVED && (
        <p id="drop-hint" class="drop-hint">Drop a profile here (pprof, Rprof, folded stacks, gperftools heap/CPU/contention/thread, Fuchsia sampler), or choose one above. Nothing leaves this page.</p>
      )}
      {status.kind === 'busy' && <p class="status" role="status">{status.text}</p>}
      {status.kind === 'error' && (
        <p class="error" role="alert" id="error">
          <code>{status.code}</code> {status.message}
        </p>
      )}
      {info && info.warnings.length > 0 && (
        <ul class="warnings">
          {info.warnings.map((w) => (
            <li>
              <code>{w.code}</code> {w.message}
            </li>
          ))}
        </ul>
      )}
      {info && (
        <Controls state={state} info={info} update={update} />
      )}
      {top && state.view === 'top' && <TopTable result={top.result} state={state} update={update} />}
      {flame && part === 'flame' && <FlameView result={flame.result} state={state} update={update} />}
      {needsFunction && info && <p id="no-function">Choose a function in the top table (click its row, or Enter) for its peek, sandwich and source.</p>}
      {peek && part === 'peek' && !needsFunction && <PeekPanel result={peek.result} update={update} />}
      {sandwich && part === 'sandwich' && !needsFunction && <SandwichPanel result={sandwich.result} fn={state.fn} update={update} />}
      {graph && part === 'graph' && <GraphPanel result={graph.result} update={update} />}
      {source && part === 'source' && !needsFunction && (
        <SourcePanel result={source.result} fn={state.fn} served={SERVED !== undefined} onDrop={(file, f) => readSources([[file, f]])} />
      )}
    </div>
  );
}

function OpenControls(props: { startProfileRead: () => () => boolean; onProfile: (p: ProfileInput) => void; onBase: (b: ProfileInput | undefined) => void; onError: (e: unknown) => void; served: boolean }) {
  if (props.served) return null;
  return (
    <div class="open">
      <label>
        Profile <input id="profile-input" type="file" onChange={async (e) => {
          const f = (e.currentTarget as HTMLInputElement).files?.[0];
          if (!f) return;
          const latest = props.startProfileRead();
          await fileInput(f).then((p) => latest() && props.onProfile(p), (err: unknown) => latest() && props.onError(err));
        }} />
      </label>
      <label title="Choose the base before the profile: the views then show profile minus base">
        Base (optional, for a diff) <input id="base-input" type="file" onChange={async (e) => {
          const f = (e.currentTarget as HTMLInputElement).files?.[0];
          if (f) await fileInput(f).then(props.onBase, props.onError);
          else props.onBase(undefined);
        }} />
      </label>
    </div>
  );
}

const VIEW_LABELS: Record<ViewState['view'], string> = { top: 'Top', flame: 'Flame graph', icicle: 'Icicle', graph: 'Call graph', peek: 'Peek', sandwich: 'Sandwich', source: 'Source' };

/** What the search box says when pointed at: its syntax, and how much of a long name it reads (patterns.ts, `MAX_SEARCH_STEPS`). */
const SEARCH_TITLE = `highlight the frames whose name matches (Go RE2, as pprof); a name is searched in its first ${MAX_SEARCH_STEPS.toLocaleString('en-US')} ÷ (the pattern's compiled size) characters, all of it for a plain text`;

/** Each filter's label and placeholder: pprof's option and its syntax. */
const FILTER_INPUTS: Record<(typeof FILTER_KEYS)[number], { label: string; placeholder: string; title: string }> = {
  focus: { label: 'focus', placeholder: 'regexp', title: 'keep only samples with a frame matching (-focus)' },
  ignore: { label: 'ignore', placeholder: 'regexp', title: 'drop samples with a frame matching (-ignore)' },
  hide: { label: 'hide', placeholder: 'regexp', title: 'remove matching frames (-hide)' },
  show: { label: 'show', placeholder: 'regexp', title: 'keep only matching frames (-show)' },
  tagFocus: { label: 'tag focus', placeholder: 'key=regexp', title: 'keep only samples whose label matches: key=regexp, or a range such as bytes=1kb: (-tagfocus)' },
  tagIgnore: { label: 'tag ignore', placeholder: 'key=regexp', title: 'drop samples whose label matches (-tagignore)' },
  tagRoot: { label: 'tag root', placeholder: 'key,key', title: 'label values of these keys as frames above the root (-tagroot)' },
};

const filtersOfState = (s: ViewState) => Object.fromEntries(FILTER_KEYS.map((k) => [k, s[k]])) as Record<(typeof FILTER_KEYS)[number], string>;

/** The filters are applied on Enter (each one recomputes the view in the worker). */
function Controls({ state, info, update }: { state: ViewState; info: LoadedInfo; update: (p: Partial<ViewState>) => void }) {
  const sampleType = state.sampleType >= 0 ? state.sampleType : info.defaultSampleType;
  const [draft, setDraft] = useState(() => filtersOfState(state));
  useEffect(() => setDraft(filtersOfState(state)), FILTER_KEYS.map((k) => state[k]));
  return (
    <div class="controls">
      <nav aria-label="views">
        {(['top', 'flame', 'icicle', 'graph', 'peek', 'sandwich', 'source'] as const).map((v) => (
          <button type="button" id={`view-${v}`} aria-pressed={state.view === v} onClick={() => update({ view: v })}>
            {VIEW_LABELS[v]}
          </button>
        ))}
      </nav>
      <label>
        Sample type{' '}
        <select id="sample-type" value={String(sampleType)} onChange={(e) => update({ sampleType: Number((e.currentTarget as HTMLSelectElement).value), zoom: [] })}>
          {info.sampleTypes.map((t, i) => (
            <option value={String(i)}>{`${t.type}/${t.unit}`}</option>
          ))}
        </select>
      </label>
      <label>
        By{' '}
        <select id="by" value={state.by} onChange={(e) => update({ by: (e.currentTarget as HTMLSelectElement).value as ViewState['by'] })}>
          <option value="function">function</option>
          <option value="file">file</option>
          <option value="line">line</option>
        </select>
      </label>
      <label title="Entries whose cum is below this share of the total are hidden (--node-fraction)">
        Hide below{' '}
        <select id="node-fraction" value={String(state.nodeFraction)} onChange={(e) => update({ nodeFraction: Number((e.currentTarget as HTMLSelectElement).value) })}>
          <option value="-1">0.5% (pprof)</option>
          <option value="0.001">0.1%</option>
          <option value="0.0001">0.01%</option>
          <option value="0">nothing</option>
        </select>
      </label>
      {state.view === 'graph' && (
        <label title="The call graph shows at most this many nodes (--nodecount)">
          Nodes{' '}
          <select id="node-count" value={String(state.nodeCount)} onChange={(e) => update({ nodeCount: Number((e.currentTarget as HTMLSelectElement).value) })}>
            <option value="-1">80 (pprof)</option>
            <option value="20">20</option>
            <option value="200">200</option>
            <option value="0">all</option>
          </select>
        </label>
      )}
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          update({ ...draft, zoom: [] });
        }}
      >
        {FILTER_KEYS.map((k) => (
          <label title={FILTER_INPUTS[k].title}>
            {FILTER_INPUTS[k].label}{' '}
            <input id={`filter-${k}`} type="text" size={12} value={draft[k]} placeholder={FILTER_INPUTS[k].placeholder} onInput={(e) => setDraft({ ...draft, [k]: (e.currentTarget as HTMLInputElement).value })} />
          </label>
        ))}
        <button type="submit" id="apply-filters">Apply</button>
      </form>
    </div>
  );
}

function DiffLegend() {
  return (
    <p class="legend" id="diff-legend">
      Diff (profile − base): <span class="swatch grew" /> grew <span class="swatch shrank" /> shrank <span class="swatch same" /> unchanged
    </p>
  );
}

function TopTable({ result, state, update }: { result: ViewResult & { top: TopView }; state: ViewState; update: (p: Partial<ViewState>) => void }) {
  const body = useRef<HTMLTableSectionElement>(null);
  const [active, setActive] = useState(0);
  const rows = result.top.rows;
  const sign = (v: string) => (!result.diff ? '' : v.startsWith('-') ? 'shrank' : v === '0' ? '' : 'grew');
  const focusRow = (i: number) => {
    const n = Math.max(0, Math.min(rows.length - 1, i));
    setActive(n);
    (body.current?.children[n] as HTMLElement | undefined)?.focus();
  };
  const onKey = (e: KeyboardEvent, i: number, row: TopRow) => {
    const step: Record<string, number> = { ArrowDown: 1, ArrowUp: -1, PageDown: 20, PageUp: -20 };
    if (e.key in step) focusRow(i + step[e.key]!);
    else if (e.key === 'Home') focusRow(0);
    else if (e.key === 'End') focusRow(rows.length - 1);
    else if (e.key === 'Enter') update({ view: 'peek', fn: row.name });
    else if (e.key === 'f') update({ focus: exactPattern(row.name), zoom: [] });
    else return;
    e.preventDefault();
  };
  const sortButton = (cum: boolean, label: string) => (
    <button type="button" id={`sort-${cum ? 'cum' : 'flat'}`} aria-pressed={state.cum === cum} onClick={() => update({ cum })}>
      {label}
      {state.cum === cum ? ' ▼' : ''}
    </button>
  );
  return (
    <section>
      {result.diff && <DiffLegend />}
      <pre id="top-header">{result.top.header.join('\n')}</pre>
      <table id="top-table" aria-label="top table: arrow keys move, Enter (or a click) opens the entry's peek and sandwich, f focuses on the entry">
        <thead>
          <tr>
            <th aria-sort={state.cum ? 'none' : 'descending'}>{sortButton(false, 'flat')}</th>
            <th>flat%</th>
            <th>sum%</th>
            <th aria-sort={state.cum ? 'descending' : 'none'}>{sortButton(true, 'cum')}</th>
            <th>cum%</th>
            <th>{state.by}</th>
          </tr>
        </thead>
        <tbody ref={body}>
          {rows.map((r, i) => (
            <tr tabIndex={i === active ? 0 : -1} data-flat={r.flat} data-cum={r.cum} onKeyDown={(e) => onKey(e, i, r)} onFocus={() => setActive(i)} onClick={() => update({ view: 'peek', fn: r.name })}>
              <td class={sign(r.flat)}>{r.flatText}</td>
              <td>{r.flatPercent}</td>
              <td>{r.sumPercent}</td>
              <td class={sign(r.cum)}>{r.cumText}</td>
              <td>{r.cumPercent}</td>
              <td class="name">{r.name}{r.inline ? ` ${r.inline}` : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {rows.length === 0 && (
        <p id="no-entries">
          {/* A profile of many thin entries (1M random stacks) can have none above the node fraction: its samples are there. */}
          {result.top.dropped > 0 ? `No entries above the node fraction (${result.top.dropped} below it): choose a smaller one to see them.` : 'No entries: the filters leave no samples.'}
        </p>
      )}
    </section>
  );
}

/** Enter or a click on a call row opens the other end's peek. */
function PeekRow({ call, kind, update }: { call: PeekCall; kind: 'caller' | 'callee'; update: (p: Partial<ViewState>) => void }) {
  const open = () => update({ view: 'peek', fn: call.name });
  return (
    <tr class={kind} tabIndex={0} data-name={call.name} data-weight={call.weight} onClick={open} onKeyDown={(e) => e.key === 'Enter' && (e.preventDefault(), open())}>
      <td>{kind === 'caller' ? '↑ caller' : '↓ callee'}</td>
      <td>{call.weightText}</td>
      <td>{call.percentOfCum.toFixed(2)}%</td>
      <td class="name">{call.name}{call.inline ? ' (inline)' : ''}</td>
    </tr>
  );
}

/** `profkit peek FILE '^fn$'`: the printed report, and its calls as rows that open their own peek. */
function PeekPanel({ result, update }: { result: ViewResult & { peek: PeekView }; update: (p: Partial<ViewState>) => void }) {
  return (
    <section id="peek">
      {result.peek.nodes.map((n) => (
        <table class="peek-table" data-name={n.name} data-flat={n.flat} data-cum={n.cum} aria-label={`callers and callees of ${n.name}: Enter on a row opens its peek`}>
          <thead>
            <tr>
              <th />
              <th>calls</th>
              <th>of cum</th>
              <th>
                {n.name}{' '}
                <button type="button" class="open-sandwich" onClick={() => update({ view: 'sandwich', fn: n.name })}>Sandwich</button>{' '}
                <button type="button" class="open-source" onClick={() => update({ view: 'source', fn: n.name })}>Source</button>
              </th>
            </tr>
          </thead>
          <tbody>
            {n.callers.map((c) => <PeekRow call={c} kind="caller" update={update} />)}
            {n.callees.map((c) => <PeekRow call={c} kind="callee" update={update} />)}
          </tbody>
        </table>
      ))}
      <pre id="peek-text">{result.peek.text}</pre>
    </section>
  );
}

/** The width in CSS pixels of the element `box` (at least 200), following window resizes: a canvas is drawn to it. */
function useBoxWidth(box: { current: HTMLElement | null }): number {
  const [width, setWidth] = useState(1000);
  useLayoutEffect(() => {
    const measure = () => setWidth(Math.max(200, Math.floor(box.current?.clientWidth ?? 1000)));
    measure();
    addEventListener('resize', measure);
    return () => removeEventListener('resize', measure);
  }, []);
  return width;
}

/**
 * A canvas flame graph drawn to the width of its box (`box`, `canvas`: the refs to give them),
 * redrawn when what is drawn changes, not on every hover; `onDrawn` runs after each drawing.
 * `frameAtEvent`: the frame under the mouse (-1 for none).
 */
function useFlameCanvas(layout: FlameLayout, options: FlameDrawOptions, onDrawn?: () => void) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const width = useBoxWidth(box);
  useLayoutEffect(() => {
    if (!canvas.current) return;
    drawFlame(canvas.current, layout, options, width);
    onDrawn?.();
  }, [layout, options, width]);
  const frameAtEvent = (e: MouseEvent) => {
    const r = canvas.current!.getBoundingClientRect();
    return frameAt(layout, options, width, e.clientX - r.left, e.clientY - r.top);
  };
  return { canvas, box, frameAtEvent };
}

/** One half of the sandwich: a canvas flame graph (no zoom); a click opens the sandwich of the frame's function. */
function SandwichHalf({ id, layout, icicle, label, fn, update }: { id: string; layout: FlameLayout; icicle: boolean; label: string; fn: string; update: (p: Partial<ViewState>) => void }) {
  const [hover, setHover] = useState(-1);
  const options: FlameDrawOptions = useMemo(() => ({ icicle, zoom: 0 }), [icicle]);
  const { canvas, box, frameAtEvent: pos } = useFlameCanvas(layout, options);
  const total = layout.value[0] ?? 0;
  const exact = (v: bigint) => formatValue(v, layout.unit);
  // The frames next to the function (its direct callers or callees), for tests and screen readers.
  const adjacent = [];
  for (let i = 1; i < layout.depth.length; i++) if (layout.depth[i] === 1) adjacent.push([layout.names[layout.nameIndex[i]!]!, String(layout.exactValue[i]!)]);
  const h = hover >= 0 && hover < layout.depth.length ? hover : -1;
  return (
    <div ref={box} class="flame-box">
      <h2>{label}</h2>
      <canvas
        id={id}
        ref={canvas}
        tabIndex={0}
        role="img"
        aria-label={`${label} of ${fn}: click a frame for its own sandwich`}
        data-total={String(layout.exactValue[0] ?? 0n)}
        data-frames={String(layout.depth.length)}
        data-elided={String(layout.elided)}
        data-adjacent={JSON.stringify(adjacent)}
        style={{ height: `${flameHeight(layout)}px` }}
        onMouseMove={(e) => setHover(pos(e))}
        onMouseLeave={() => setHover(-1)}
        onClick={(e) => {
          const i = pos(e);
          if (i > 0) update({ fn: layout.names[layout.nameIndex[i]!]! });
        }}
      />
      <p class="detail" aria-live="polite">
        {h >= 0 ? `${layout.names[layout.nameIndex[h]!]}: ${exact(layout.exactValue[h]!)} (${formatPercentage(layout.value[h]!, total).trim()} of ${fn})` : '\u00a0'}
        {layout.elided > 0 && <span class="note"> {layout.elided.toLocaleString('en-US')} frames narrower than 0.001% left out</span>}
      </p>
    </div>
  );
}

/** The sandwich of one function (speedscope's): its callers above it, its callees below it. */
function SandwichPanel({ result, fn, update }: { result: ViewResult & { sandwich: SandwichView }; fn: string; update: (p: Partial<ViewState>) => void }) {
  return (
    <section id="sandwich">
      <p>
        Sandwich of <b id="sandwich-function">{fn}</b>{' '}
        <button type="button" id="open-peek" onClick={() => update({ view: 'peek' })}>Peek</button>
      </p>
      {!(result.sandwich.callers.value[0]! > 0) && <p id="sandwich-empty">No frame of the flame graph is named {fn} (the sandwich is by function, as the flame graph), or the filters leave it no samples.</p>}
      <SandwichHalf id="sandwich-callers" layout={result.sandwich.callers} icicle={false} label="Callers (inverted: the function at the bottom)" fn={fn} update={update} />
      <SandwichHalf id="sandwich-callees" layout={result.sandwich.callees} icicle label="Callees" fn={fn} update={update} />
    </section>
  );
}

/** graph.js (the call graph's layout), loaded once, when the graph view is first shown. */
let graphLayout: Promise<GraphLayout> | undefined;

function loadGraphLayout(): Promise<GraphLayout> {
  graphLayout ??= new Promise<GraphLayout>((resolve, reject) => {
    const script = document.createElement('script');
    script.src = new URL('graph.js', document.baseURI).href;
    script.onload = () => resolve((globalThis as unknown as { profkitGraph: GraphLayout }).profkitGraph);
    script.onerror = () => {
      graphLayout = undefined;
      reject(new ProfkitError(ErrorCodes.IO, 'graph.js (the call graph\'s layout) could not be loaded', { file: 'graph.js' }));
    };
    document.head.append(script);
  });
  return graphLayout;
}

/** Elements and attributes of Graphviz's SVG the page keeps out: nothing in the graph may run code or load anything. */
const UNSAFE_SVG_ELEMENTS = new Set(['script', 'foreignObject', 'iframe', 'image', 'use', 'style']);

function sanitizeSvg(svg: SVGSVGElement): void {
  for (const el of [svg, ...svg.querySelectorAll('*')]) {
    if (UNSAFE_SVG_ELEMENTS.has(el.localName)) {
      el.remove();
      continue;
    }
    for (const a of [...el.attributes]) if (/^on/i.test(a.name) || /href$/i.test(a.name) || a.name === 'style') el.removeAttribute(a.name);
  }
}

/**
 * The call graph: `profkit graph --format dot`'s DOT (the worker's), laid out by Graphviz in
 * WebAssembly (graph.js, loaded on first use). Each function's box is a button: a click, Enter
 * or Space focuses the views on it (pprof -focus); Tab moves from box to box.
 */
function GraphPanel({ result, update }: { result: ViewResult & { graph: GraphView }; update: (p: Partial<ViewState>) => void }) {
  const box = useRef<HTMLDivElement>(null);
  const [layoutError, setLayoutError] = useState('');
  const [laidOut, setLaidOut] = useState(false);
  const nodes = useMemo(() => new Map(result.graph.nodes.map((n) => [n.id, n])), [result.graph]);
  useEffect(() => {
    let current = true;
    setLaidOut(false);
    setLayoutError('');
    loadGraphLayout()
      .then((g) => g.dotToSvg(result.graph.dot))
      .then(
        (svg) => {
          if (!current || !box.current) return;
          sanitizeSvg(svg);
          svg.id = 'graph-svg';
          svg.setAttribute('role', 'group');
          svg.setAttribute('aria-label', 'call graph: Tab moves between functions, Enter focuses on one');
          for (const g of svg.querySelectorAll<SVGGElement>('g.node')) {
            const n = nodes.get(g.querySelector('title')?.textContent ?? '');
            if (!n) continue;
            g.setAttribute('tabindex', '0');
            g.setAttribute('role', 'button');
            g.setAttribute('aria-label', `${n.name}: flat ${formatValue(BigInt(n.flat), result.unit)}, cum ${formatValue(BigInt(n.cum), result.unit)}; Enter focuses on it`);
            g.dataset.name = n.name;
            g.dataset.flat = n.flat;
            g.dataset.cum = n.cum;
          }
          box.current.replaceChildren(svg);
          setLaidOut(true);
        },
        (e: unknown) => current && setLayoutError(e instanceof Error ? e.message : String(e)),
      );
    return () => {
      current = false;
    };
  }, [result.graph]);
  const focusOn = (target: EventTarget | null) => {
    const name = (target as Element | null)?.closest<SVGGElement>('g.node[data-name]')?.dataset.name;
    if (name === undefined) return false;
    update({ focus: exactPattern(name), zoom: [] });
    return true;
  };
  return (
    <section id="graph">
      {result.diff && <p class="legend">Diff (profile − base): the graph of the difference, coloured as pprof colours it (by the sign and size of cum), not red/blue.</p>}
      {!laidOut && !layoutError && <p class="status" id="graph-loading">laying out the graph…</p>}
      {layoutError && (
        <p class="error" role="alert" id="error">
          <code>PROFKIT_E_IO</code> {layoutError}
        </p>
      )}
      <div
        ref={box}
        class="graph-box"
        data-nodes={String(result.graph.nodes.length)}
        onClick={(e) => focusOn(e.target)}
        onKeyDown={(e) => {
          if ((e.key === 'Enter' || e.key === ' ') && focusOn(e.target)) e.preventDefault();
        }}
      />
      <details>
        <summary>DOT (as profkit graph --format dot writes it)</summary>
        <pre id="graph-dot">{result.graph.dot}</pre>
      </details>
    </section>
  );
}

/** One function in one file of the listing: its lines with their costs, and the text when known. */
function SourceRoutinePanel({ routine, unit, served, onDrop }: { routine: SourceRoutine; unit: string; served: boolean; onDrop: (file: string, f: File) => void }) {
  const fv = (v: string) => formatValue(BigInt(v), unit);
  return (
    <div class="routine" data-name={routine.name} data-file={routine.file} data-flat={routine.flat} data-cum={routine.cum}>
      <h2>
        {routine.name} <span class="file">{routine.file !== '' ? `in ${routine.file}` : ''}</span>
      </h2>
      <p>
        flat {fv(routine.flat)}, cum {fv(routine.cum)}
      </p>
      {routine.error !== undefined && <p class="source-error">{routine.error}</p>}
      {routine.noText && !served && routine.file !== '' && (
        <label class="source-drop">
          The static page has no source text: drop {baseNameOf(routine.file)} here, or choose it, to see it{' '}
          <input
            type="file"
            class="source-input"
            onChange={(e) => {
              const f = (e.currentTarget as HTMLInputElement).files?.[0];
              if (f) onDrop(routine.file, f);
            }}
          />
        </label>
      )}
      {routine.lines.length > 0 && (
        <table class="source-table" tabIndex={0} aria-label={`source lines of ${routine.name} with their flat and cum (arrow keys scroll)`}>
          <thead>
            <tr>
              <th>flat</th>
              <th>cum</th>
              <th>line</th>
              <th>source</th>
            </tr>
          </thead>
          <tbody>
            {routine.lines.map((l) => (
              <tr data-line={String(l.line)} data-flat={l.flat} data-cum={l.cum} class={l.cum !== '0' ? 'hot' : ''}>
                <td>{l.flatText}</td>
                <td>{l.cumText}</td>
                <td class="lineno">{l.line}</td>
                <td class="code">{l.text}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** `profkit list FILE '^fn$'`: each of the function's files with its line costs and source text. */
function SourcePanel({ result, fn, served, onDrop }: { result: ViewResult & { source: SourceView }; fn: string; served: boolean; onDrop: (file: string, f: File) => void }) {
  const complete = result.source.routines.every((r) => !r.noText);
  return (
    <section id="source">
      <p>
        Source of <b id="source-function">{fn}</b> (total {formatValue(BigInt(result.source.total), result.unit)})
      </p>
      {result.source.routines.map((r) => (
        <SourceRoutinePanel routine={r} unit={result.unit} served={served} onDrop={onDrop} />
      ))}
      {complete && (
        <details>
          <summary>As profkit list prints it</summary>
          <pre id="source-text">{result.source.text}</pre>
        </details>
      )}
    </section>
  );
}

/** Marks the first flame paint of the page (measured by the benchmark, docs/web.md). */
let painted = false;

function markFirstPaint(): void {
  if (painted) return;
  painted = true;
  performance.mark('profkit:first-flame-paint');
}

interface FlameSearch {
  layout?: FlameLayout;
  pattern: string;
  matches?: Uint8Array;
  error: string;
}

/**
 * The flame search of `pattern` over `layout`, matched in slices (searchMatchesInSlices) so that
 * the page answers input while a costly pattern runs; a newer pattern or layout cancels the older
 * search, whose result then never shows. Until the search ends, the previous matches of the same
 * layout stay drawn (another layout's frame numbers are not this one's).
 */
function useFlameSearch(layout: FlameLayout, pattern: string): { matches?: Uint8Array; searchError: string; searching: boolean } {
  const [done, setDone] = useState<FlameSearch>({ pattern: '', error: '' });
  useEffect(() => {
    const controller = new AbortController();
    const finish = (result: Omit<FlameSearch, 'layout' | 'pattern'>) => {
      if (!controller.signal.aborted) setDone({ layout, pattern, ...result });
    };
    searchMatchesInSlices(layout, pattern, { signal: controller.signal }).then(
      (matches) => finish({ matches, error: '' }),
      (e: unknown) => finish({ error: e instanceof Error ? e.message : String(e) }),
    );
    return () => controller.abort();
  }, [layout, pattern]);
  const sameLayout = done.layout === layout;
  const current = sameLayout && done.pattern === pattern;
  // Cleared: nothing drawn at once (the previous matches stayed a paint, until the empty search's effect ran).
  return { matches: sameLayout && pattern !== '' ? done.matches : undefined, searchError: current ? done.error : '', searching: !current && pattern !== '' };
}

function FlameView({ result, state, update }: { result: ViewResult & { flame: FlameLayout }; state: ViewState; update: (p: Partial<ViewState>) => void }) {
  const layout = result.flame;
  const [hover, setHover] = useState(-1);
  const parent = useMemo(() => parentsOf(layout), [layout]);
  const zoom = useMemo(() => frameAtPath(layout, state.zoom), [layout, state.zoom.join('\n')]);
  const { matches, searchError, searching } = useFlameSearch(layout, state.search);
  const matched = useMemo(() => (matches ? matchedTotal(layout, matches) : 0), [layout, matches]);
  const icicle = state.view === 'icicle';
  const options: FlameDrawOptions = useMemo(() => ({ icicle, zoom, matches }), [icicle, zoom, matches]);
  const { canvas, box, frameAtEvent: pos } = useFlameCanvas(layout, options, markFirstPaint);
  const total = layout.value[0] ?? 0;
  /** The search's matched total is a sum of the drawn (float) widths; the frames' own values print exact. */
  const fmt = (v: number) => formatValue(BigInt(Math.round(v)), layout.unit);
  const exact = (v: bigint) => formatValue(v, layout.unit);
  const h = hover >= 0 && hover < layout.depth.length ? hover : -1;
  return (
    <section>
      {result.diff && <DiffLegend />}
      <div class="flame-tools">
        <label>
          Search{' '}
          <input id="search" type="search" value={state.search} placeholder="regexp" title={SEARCH_TITLE} aria-invalid={searchError !== ''} onInput={(e) => update({ search: (e.currentTarget as HTMLInputElement).value })} />
        </label>
        {searching && <span id="search-status" class="note">searching…</span>}
        {matches && <span id="search-total">matched: {fmt(matched)} ({formatPercentage(matched, total).trim()})</span>}
        {searchError && <span class="error">{searchError}</span>}
        <button type="button" id="reset-zoom" disabled={zoom === 0} onClick={() => update({ zoom: [] })}>Reset zoom</button>
        {layout.elided > 0 && <span class="note">{layout.elided.toLocaleString('en-US')} frames narrower than 0.001% left out, with their callees</span>}
      </div>
      <div ref={box} class="flame-box">
        <canvas
          id="flame"
          ref={canvas}
          tabIndex={0}
          role="img"
          aria-label={`${state.view === 'icicle' ? 'icicle' : 'flame'} graph of ${result.sampleTypeName}: click a frame to zoom, Escape to zoom out`}
          data-frames={String(layout.depth.length)}
          data-elided={String(layout.elided)}
          data-total={String(layout.exactValue[0] ?? 0n)}
          data-zoom={String(zoom)}
          style={{ height: `${flameHeight(layout)}px` }}
          onMouseMove={(e) => setHover(pos(e))}
          onMouseLeave={() => setHover(-1)}
          onClick={(e) => {
            const i = pos(e);
            if (i >= 0) update({ zoom: pathOf(layout, parent, i) });
          }}
          onKeyDown={(e) => {
            if (e.key === 'Escape' && zoom !== 0) {
              update({ zoom: pathOf(layout, parent, parent[zoom]!) });
              e.preventDefault();
            }
          }}
        />
      </div>
      <p id="flame-detail" class="detail" aria-live="polite">
        {h >= 0
          ? `${layout.names[layout.nameIndex[h]!]}: ${exact(layout.exactValue[h]!)} (${formatPercentage(layout.value[h]!, total).trim()}), self ${exact(layout.exactSelf[h]!)}` +
            (layout.baseBelowCut?.[h] ? `, base below ${fmt(layout.baseCut!)} (narrower than the graph shows)` : layout.exactBase ? `, base ${exact(layout.exactBase[h]!)}, change ${layout.exactValue[h]! - layout.exactBase[h]! >= 0n ? '+' : ''}${exact(layout.exactValue[h]! - layout.exactBase[h]!)}` : '')
          : 'Point at a frame for its values; click to zoom.'}
      </p>
    </section>
  );
}

render(<App />, document.getElementById('app')!);
