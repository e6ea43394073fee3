/**
 * The view state and the URL hash: everything that decides what the page shows (view, sample
 * type, granularity, sort, filters, search, zoom) is in the hash, so a link or a reload reopens
 * the same view. `#view=flame&st=1&by=line&cum=1&focus=…&tagfocus=…&q=…&zoom=main;run` — unknown
 * keys and bad values fall back to the defaults.
 */

import type { ViewBy, ViewFilters, ViewName, ViewOptions } from './protocol.js';

/** The filters, in the order the page shows them. */
export const FILTER_KEYS = ['focus', 'ignore', 'hide', 'show', 'tagFocus', 'tagIgnore', 'tagRoot'] as const;

/** Each filter's key in the hash: pprof's option names. */
const HASH_KEYS: Record<keyof ViewFilters, string> = { focus: 'focus', ignore: 'ignore', hide: 'hide', show: 'show', tagFocus: 'tagfocus', tagIgnore: 'tagignore', tagRoot: 'tagroot' };

/** No filter set. */
export const NO_FILTERS: ViewFilters = { focus: '', ignore: '', hide: '', show: '', tagFocus: '', tagIgnore: '', tagRoot: '' };

export interface ViewState extends ViewOptions {
  view: ViewName;
  /** Search pattern (a regular expression) highlighted in the flame graph. */
  search: string;
  /** The zoomed frame of the flame graph as its call path of names from the root's child down; [] = no zoom. */
  zoom: string[];
  /** The function of the peek and sandwich views (a top table entry's name); '' = none. */
  fn: string;
}

export const DEFAULT_STATE: ViewState = { view: 'top', sampleType: -1, by: 'function', cum: false, nodeFraction: -1, nodeCount: -1, ...NO_FILTERS, search: '', zoom: [], fn: '' };

const VIEWS: readonly ViewName[] = ['top', 'flame', 'icicle', 'peek', 'sandwich', 'graph', 'source'];
const BYS: readonly ViewBy[] = ['function', 'file', 'line'];

/** The state a hash says (leading `#` optional). */
export function stateFromHash(hash: string): ViewState {
  const q = new URLSearchParams(hash.replace(/^#/, ''));
  const s: ViewState = { ...DEFAULT_STATE, zoom: [] };
  const view = q.get('view');
  if (view && (VIEWS as string[]).includes(view)) s.view = view as ViewName;
  const st = Number(q.get('st') ?? '-1');
  if (Number.isInteger(st) && st >= 0) s.sampleType = st;
  const by = q.get('by');
  if (by && (BYS as string[]).includes(by)) s.by = by as ViewBy;
  s.cum = q.get('cum') === '1';
  const nf = Number(q.get('nf') ?? '-1');
  if (q.has('nf') && Number.isFinite(nf) && nf >= 0 && nf <= 1) s.nodeFraction = nf;
  const n = Number(q.get('n') ?? '-1');
  if (q.has('n') && Number.isInteger(n) && n >= 0) s.nodeCount = n;
  for (const k of FILTER_KEYS) s[k] = q.get(HASH_KEYS[k]) ?? '';
  s.search = q.get('q') ?? '';
  const zoom = q.get('zoom');
  s.zoom = zoom ? zoom.split('\n') : [];
  s.fn = q.get('fn') ?? '';
  return s;
}

/** The hash for a state: only what differs from the defaults. */
export function hashOf(s: ViewState): string {
  const q = new URLSearchParams();
  if (s.view !== DEFAULT_STATE.view) q.set('view', s.view);
  if (s.sampleType >= 0) q.set('st', String(s.sampleType));
  if (s.by !== DEFAULT_STATE.by) q.set('by', s.by);
  if (s.cum) q.set('cum', '1');
  if (s.nodeFraction >= 0) q.set('nf', String(s.nodeFraction));
  if (s.nodeCount >= 0) q.set('n', String(s.nodeCount));
  for (const k of FILTER_KEYS) if (s[k] !== '') q.set(HASH_KEYS[k], s[k]);
  if (s.search !== '') q.set('q', s.search);
  if (s.zoom.length > 0) q.set('zoom', s.zoom.join('\n'));
  if (s.fn !== '') q.set('fn', s.fn);
  const text = q.toString();
  return text === '' ? '' : `#${text}`;
}

/** The options the worker computes a view from. */
export function viewOptionsOf(s: ViewState): ViewOptions {
  const filters = Object.fromEntries(FILTER_KEYS.map((k) => [k, s[k]])) as unknown as ViewFilters;
  return { sampleType: s.sampleType, by: s.by, cum: s.cum, nodeFraction: s.nodeFraction, nodeCount: s.nodeCount, ...filters };
}

/** A regular expression (JavaScript and Go/RE2 spelling alike) matching exactly `name`. */
export function exactPattern(name: string): string {
  return `^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
}
