/**
 * The Web Worker's message order (src/app/worker.ts), run in Node with `self` stood in for: loads
 * sent back to back (a profile dropped while another is read) are answered one after the other,
 * each with its own profile, its decode started ahead finished from its own bytes (a map of its
 * own per load: one load's `clear()` can no longer reach another's), and a view asked after them
 * computed on the last one.
 */

import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ProfileBuilder } from '@profkit/core';
import { ProfileDecoder, serializePprof } from '@profkit/pprof';
import { DEFAULT_STATE, viewOptionsOf } from '../src/app/state.js';
import type { WorkerRequest, WorkerResponse } from '../src/app/protocol.js';

/** `bytes` as the ArrayBuffer a load message carries. */
function bufferOf(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;
}

/** A gzip pprof profile of `n` samples of one of two stacks under `root`. */
function gzipProfile(root: string, n: number): ArrayBuffer {
  const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
  const leaf = (name: string) => b.internLocation({ functionId: b.internFunction({ name }) });
  const [top, a, c] = [leaf(root), leaf(`${root}.a`), leaf(`${root}.b`)];
  for (let i = 0; i < n; i++) b.addSample(i % 3 === 0 ? [a, top] : [c, top], [BigInt(1 + (i % 5))]);
  return bufferOf(gzipSync(serializePprof(b.build(), { compress: false })));
}

describe('the worker answers requests in the order sent', () => {
  const answers: WorkerResponse[] = [];
  const scope: { onmessage: ((e: { data: WorkerRequest }) => void) | null; postMessage(m: WorkerResponse): void } = { onmessage: null, postMessage: (m) => void answers.push(m) };
  afterAll(() => void vi.unstubAllGlobals());
  const send = (data: WorkerRequest) => scope.onmessage!({ data });
  /** The answer to request `id`, once it came. */
  const answerTo = async (id: number) => {
    await vi.waitFor(() => expect(answers.some((a) => a.id === id)).toBe(true), { timeout: 60_000 });
    return answers.find((a) => a.id === id)!;
  };

  it('two loads back to back, a failing one between: each answered with its own profile or error, each decode ahead finished on its own bytes, the view on the last', async () => {
    vi.stubGlobal('self', scope);
    await import('../src/app/worker.js');
    const finished: number[] = [];
    const finish = ProfileDecoder.prototype.finish;
    vi.spyOn(ProfileDecoder.prototype, 'finish').mockImplementation(function (this: ProfileDecoder, bytes, options) {
      finished.push(bytes.length);
      return finish.call(this, bytes, options);
    });
    const first = gzipProfile('first', 20_000);
    const broken = new Uint8Array(gzipProfile('broken', 100));
    broken.fill(0x5a, 30, 60);
    const last = gzipProfile('last', 300);
    send({ kind: 'load', id: 1, profile: { name: 'first.pb.gz', bytes: first } });
    send({ kind: 'load', id: 2, profile: { name: 'broken.pb.gz', bytes: broken.buffer } });
    send({ kind: 'load', id: 3, profile: { name: 'last.pb.gz', bytes: last } });
    send({ kind: 'view', id: 4, options: viewOptionsOf(DEFAULT_STATE), part: 'top' });
    await vi.waitFor(() => expect(answers.length).toBe(4), { timeout: 60_000 });

    expect(answers.map((a) => [a.id, a.kind])).toEqual([
      [1, 'loaded'],
      [2, 'error'],
      [3, 'loaded'],
      [4, 'view'],
    ]);
    expect(answers[0]!.kind === 'loaded' && answers[0]!.info.samples).toBe(20_000);
    expect(answers[1]!.kind === 'error' && answers[1]!.code).toMatch(/^PROFKIT_E_/);
    expect(answers[2]!.kind === 'loaded' && answers[2]!.info.samples).toBe(300);
    const rows = answers[3]!.kind === 'view' ? answers[3]!.result.top!.rows.map((r) => r.name) : [];
    expect(rows.length).toBeGreaterThan(0);
    for (const name of rows) expect(name).toMatch(/^last/);
    // The two good loads' pprof reads finished the decodes started on their inflated bytes.
    const inflatedSize = (gz: ArrayBuffer) => new DataView(gz).getUint32(gz.byteLength - 4, true);
    expect(finished).toEqual([inflatedSize(first), inflatedSize(last)]);
  });

  it("keeps the source files profkit web served within the bound of the dropped ones (was: every file fetched, for the whole session), fetching a forgotten one again when a listing needs it", async () => {
    // One function `f` in three files, each served as 1,000,000 lines of 200 characters (one
    // string shared: 201 M characters each as the worker counts them, 603 M together, past 512 Mi).
    const b = new ProfileBuilder({ sampleTypes: [{ type: 'samples', unit: 'count' }] });
    for (const file of ['a.go', 'b.go', 'c.go']) b.addSample([b.internLocation({ functionId: b.internFunction({ name: 'f', filename: file }), line: 10 })], [1n]);
    const line = 'x'.repeat(200);
    const served = { lines: Array.from({ length: 1_000_000 }, () => line) };
    const fetched: string[] = [];
    vi.stubGlobal('fetch', async (url: string) => {
      fetched.push(new URL(url).searchParams.get('file')!);
      return { ok: true, status: 200, json: async () => served };
    });
    const source = { url: 'http://127.0.0.1:1/source', sourcePath: '', trimPath: '' };
    send({ kind: 'load', id: 10, profile: { name: 'f.pb', bytes: bufferOf(serializePprof(b.build(), { compress: false })) }, source });
    expect((await answerTo(10)).kind).toBe('loaded');
    const view = { kind: 'view', options: viewOptionsOf(DEFAULT_STATE), part: 'source', fn: 'f' } as const;
    send({ ...view, id: 11 });
    const first = await answerTo(11);
    expect(fetched.sort()).toEqual(['a.go', 'b.go', 'c.go']);
    // Two files' text fit: the first fetched was forgotten, its routine shown without text.
    const withText = (a: WorkerResponse) => (a.kind === 'view' ? a.result.source!.routines.filter((r) => !r.noText).length : -1);
    expect(withText(first)).toBe(2);
    send({ ...view, id: 12 });
    await answerTo(12);
    expect(fetched.length).toBe(4);
  }, 120_000);
});
