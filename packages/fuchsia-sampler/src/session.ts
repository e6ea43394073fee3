/**
 * A connection's processing, shared by the file reader and the live collector: decode records
 * (channel messages and socket datagrams) or JSONL calls, apply them to a `Sampler` in arrival
 * order, and emit partial profiles when upstream's trigger fires and a final profile at the end.
 */

import { isProfkitError, limitError, limitValue, type Profile, type ReadLimits, type Warning } from '@profkit/core';
import { FuchsiaErrorCodes as C } from './errors.js';
import { decodeChannelMessage, decodeDatagram, type SamplerCall } from './fidl/protocol.js';
import { buildProfile, type ProfileOptions } from './profile.js';
import { RecordKind, type JsonlEntry, type RawRecord } from './recording.js';
import { RECLAIMABLE_STACK_TRACES_PROFILE_THRESHOLD, Sampler, type SamplerOptions } from './sampler.js';

export interface EmittedProfile {
  kind: 'partial' | 'final';
  /** Events processed when the profile was made (upstream's "iteration"). */
  iteration: number;
  processName: string;
  profile: Profile;
}

export interface SessionOptions extends SamplerOptions, Omit<ProfileOptions, 'kind'> {
  /** Distinct dead + deallocation stacks that trigger a partial profile (default 1000; 0 = never). */
  partialThreshold?: number;
  /** Time between partial profiles (live collection; default 12 h; 0 = never). */
  partialIntervalMs?: number;
  /**
   * What a missing required field does: `skip` the record and report a warning (default, for
   * files) or `fatal` (upstream: ends the connection's processing with the error).
   */
  missingField?: 'skip' | 'fatal';
  /** Called with every partial profile (and the final one). */
  onProfile?: (p: EmittedProfile) => void;
  /** Whether to build partial profiles at all (a reader asking only for the final one still resets periods). */
  buildPartials?: boolean;
  file?: string;
  now?: () => number;
  /** Read limits: `maxFramesPerStack` bounds the frames of one call's stack (core's `READ_LIMITS` by default). */
  limits?: ReadLimits;
}

export class Session {
  readonly sampler: Sampler;
  readonly warnings: Warning[] = [];
  private readonly opts: SessionOptions;
  private lastPartial: number;
  private socketClosed = false;
  partialCount = 0;

  constructor(options: SessionOptions = {}) {
    this.opts = options;
    // The peak is measured in the same bytes the profile reports: weighted when unsampling.
    this.sampler = new Sampler({ ...options, peakWeighted: options.peakWeighted ?? options.unsample ?? true });
    this.lastPartial = (options.now ?? Date.now)();
  }

  private warn(code: string, message: string, detail: Record<string, unknown>): void {
    // Bounded: keep the first 100 warnings, count the rest in the extension facts.
    if (this.warnings.length < 100) this.warnings.push({ code, message, detail: { file: this.opts.file, ...detail } });
  }

  /** Decodes and applies one framed record. Malformed channel messages throw; bad datagrams are dropped (upstream). */
  handleRecord(r: RawRecord): void {
    if (r.kind === RecordKind.CHANNEL) {
      const m = decodeChannelMessage(r.payload, { file: this.opts.file, offset: r.offset });
      if (m.kind === 'unknown-method') {
        this.sampler.skip('unknownMethods');
        this.warn('FUCHSIA_UNKNOWN_METHOD', `unknown flexible method 0x${m.ordinal.toString(16)} ignored`, { offset: r.offset });
        this.afterEvent();
        return;
      }
      this.handleCall(m.call, r.offset);
      return;
    }
    if (r.kind === RecordKind.SOCKET_CLOSED) {
      this.socketClosed = true;
      return;
    }
    // Datagram: upstream logs and ignores undecodable datagrams and unknown variants.
    if (this.socketClosed) {
      this.sampler.skip('droppedDatagrams');
      this.warn('FUCHSIA_DATAGRAM_AFTER_CLOSE', 'datagram after the socket closed ignored', { offset: r.offset });
      this.afterEvent();
      return;
    }
    let d;
    try {
      d = decodeDatagram(r.payload, { file: this.opts.file, offset: r.offset });
    } catch (e) {
      if (!isProfkitError(e)) throw e;
      this.sampler.skip('droppedDatagrams');
      this.warn(e.code, `undecodable datagram ignored: ${e.message}`, { offset: e.detail.offset ?? r.offset, rule: e.detail.rule });
      this.afterEvent();
      return;
    }
    if (d.kind === 'unknown-variant') {
      this.sampler.skip('droppedDatagrams');
      this.warn('FUCHSIA_UNKNOWN_VARIANT', `datagram with unknown variant ${d.ordinal} ignored`, { offset: r.offset });
      this.afterEvent();
      return;
    }
    this.handleCall(d.call, r.offset);
  }

  /** Applies one JSONL entry (same semantics as the binary records it stands for). */
  handleJsonl(e: JsonlEntry): void {
    if (e.kind === 'socket-closed') {
      this.socketClosed = true;
      return;
    }
    if (e.via === 'socket' && this.socketClosed) {
      this.sampler.skip('droppedDatagrams');
      this.warn('FUCHSIA_DATAGRAM_AFTER_CLOSE', 'datagram after the socket closed ignored', { line: e.line });
      this.afterEvent();
      return;
    }
    this.handleCall(e.call, undefined, e.line);
  }

  /** Applies one call (from a record or a JSONL line). */
  handleCall(call: SamplerCall, offset?: number, line?: number): void {
    const frames = (call as { stackTrace?: { stackFrames?: BigUint64Array } }).stackTrace?.stackFrames;
    if (frames) {
      const max = limitValue(this.opts.limits, 'maxFramesPerStack');
      if (frames.length > max) throw limitError('maxFramesPerStack', `a stack of ${frames.length} frames`, max, { file: this.opts.file, offset, line });
    }
    try {
      this.sampler.apply(call);
    } catch (e) {
      if (isProfkitError(e) && e.code === C.MISSING_FIELD) {
        const err = e.withDetail({ file: this.opts.file, offset, line });
        if (this.opts.missingField === 'fatal') throw err;
        this.warn(err.code, `record skipped: ${err.message}`, { offset, line, rule: err.detail.rule });
      } else {
        throw e;
      }
    }
    this.afterEvent();
  }

  private afterEvent(): void {
    const threshold = this.opts.partialThreshold ?? RECLAIMABLE_STACK_TRACES_PROFILE_THRESHOLD;
    const interval = this.opts.partialIntervalMs ?? 12 * 3600 * 1000;
    let due = threshold > 0 && this.sampler.reclaimableStacks >= threshold;
    if (!due && interval > 0) due = (this.opts.now ?? Date.now)() - this.lastPartial >= interval;
    if (due) this.partial();
  }

  /** Emits a partial profile now and starts a new period. */
  partial(): void {
    this.lastPartial = (this.opts.now ?? Date.now)();
    this.partialCount++;
    if (this.opts.buildPartials !== false && this.opts.onProfile) {
      this.opts.onProfile({ kind: 'partial', iteration: this.sampler.events, processName: this.sampler.processName, profile: this.profile('partial') });
    }
    this.sampler.resetPeriod();
  }

  profile(kind: 'partial' | 'final'): Profile {
    return buildProfile(this.sampler, { unsample: this.opts.unsample, peak: this.opts.peak, kind });
  }

  /** The final profile (connection closed). */
  finish(): EmittedProfile {
    const p: EmittedProfile = { kind: 'final', iteration: this.sampler.events, processName: this.sampler.processName, profile: this.profile('final') };
    this.opts.onProfile?.(p);
    return p;
  }
}
