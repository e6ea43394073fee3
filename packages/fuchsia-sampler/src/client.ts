/**
 * A small client of the live collector: connects over TCP or a unix socket, sends the stream
 * header and then records (encoded calls, or raw records from a recording), with buffering and
 * back-pressure. Also `replayTo`, which sends a whole recording (binary or JSONL).
 *
 * The collector answers each connection with one line before closing it (server.ts, "Replies"):
 * `close()` half-closes and waits for it, so a stream the collector refused (client limit) or
 * cut (bad input, idle) is an error here rather than a silent success.
 */

import { connect, type Socket } from 'node:net';
import { ErrorCodes, ProfkitError } from '@profkit/core';
import { encodeChannelMessage, encodeDatagram, type Generation, type SamplerCall } from './fidl/protocol.js';
import { frameRecord, isRecording, parseJsonl, RecordKind, recordingHeader, RecordReader, type RecordKindValue } from './recording.js';
import { MAX_REPLY_BYTES, parseAddress, parseReply, type CollectorReplyStatus } from './server.js';

export interface ClientOptions {
  /** Protocol generation for encoded calls (default 2). */
  generation?: Generation;
  /** Connection timeout (default 10 s). */
  timeoutMs?: number;
  /** Bytes buffered before a write (default 64 KiB). */
  batchBytes?: number;
  /** How long `close()` waits for the collector's reply once the stream is sent (default 120 s: it answers after writing the final profile). */
  replyTimeoutMs?: number;
}

export class SamplerClient {
  private chunks: Uint8Array[] = [];
  private size = 0;
  private socketSetUp = false;
  private error: Error | undefined;
  /** Bytes of the collector's reply line received so far (bounded by MAX_REPLY_BYTES). */
  private replyBytes: Buffer[] = [];
  private replyLength = 0;
  /** The collector's reply, once its line is complete. */
  reply: { status: CollectorReplyStatus; message: string } | undefined;
  sentRecords = 0;

  constructor(
    private readonly socket: Socket,
    private readonly options: ClientOptions,
    /** For messages. */
    private readonly address = 'the collector',
  ) {
    // The first error wins: a refusal line explains the reset that may follow it.
    socket.on('error', (e) => (this.error ??= networkError(e)));
    socket.on('data', (chunk: Buffer) => this.onReplyData(chunk));
    this.enqueue(recordingHeader());
  }

  /** Collects the collector's reply line; anything but `ok` ends the connection with an error. */
  private onReplyData(chunk: Buffer): void {
    if (this.reply || this.error) return;
    const nl = chunk.indexOf(0x0a);
    const part = nl < 0 ? chunk : chunk.subarray(0, nl);
    if (this.replyLength + part.length > MAX_REPLY_BYTES) {
      this.fail(new ProfkitError(ErrorCodes.NETWORK, `${this.address} sent more than ${MAX_REPLY_BYTES} bytes without a reply line`, { address: this.address, rule: 'the collector answers one short line' }));
      return;
    }
    this.replyBytes.push(part);
    this.replyLength += part.length;
    if (nl < 0) return;
    const line = Buffer.concat(this.replyBytes).toString('utf8');
    this.replyBytes = [];
    const reply = parseReply(line);
    if (!reply) {
      this.fail(new ProfkitError(ErrorCodes.NETWORK, `${this.address} answered ${JSON.stringify(line.slice(0, 80))}, not a collector reply`, { address: this.address, rule: 'the collector answers "ok: …", "refused: …" or "error: …"' }));
      return;
    }
    this.reply = reply;
    if (reply.status === 'refused') {
      this.fail(new ProfkitError(ErrorCodes.NETWORK, `${this.address} refused the connection: ${reply.message}`, { address: this.address, rule: 'the collector accepts the client' }));
    } else if (reply.status === 'error') {
      this.fail(new ProfkitError(ErrorCodes.NETWORK, `${this.address} ended the connection: ${reply.message}`, { address: this.address, rule: 'the collector takes the whole stream' }));
    }
  }

  /** Records the error and drops the connection (sending more would be pointless). */
  private fail(e: ProfkitError): void {
    this.error ??= e;
    this.socket.destroy();
  }

  private enqueue(b: Uint8Array): void {
    this.chunks.push(b);
    this.size += b.length;
  }

  /** Sends one call over the "channel", or over the "socket" (gen-3 datagram; SetSharedSocket sent first). */
  async send(call: SamplerCall, via: 'channel' | 'socket' = 'channel'): Promise<void> {
    if (via === 'socket') {
      if (!this.socketSetUp) {
        this.enqueue(frameRecord(RecordKind.CHANNEL, encodeChannelMessage({ method: 'SetSharedSocket' }, { generation: 3 })));
        this.socketSetUp = true;
      }
      this.enqueue(frameRecord(RecordKind.DATAGRAM, encodeDatagram(call)));
    } else {
      this.enqueue(frameRecord(RecordKind.CHANNEL, encodeChannelMessage(call, { generation: call.method === 'SetSharedSocket' ? 3 : this.options.generation ?? 2 })));
    }
    this.sentRecords++;
    if (this.size >= (this.options.batchBytes ?? 65536)) await this.flush();
  }

  /** Sends an already framed record payload. */
  async sendRecord(kind: RecordKindValue, payload: Uint8Array): Promise<void> {
    this.enqueue(frameRecord(kind, payload));
    this.sentRecords++;
    if (this.size >= (this.options.batchBytes ?? 65536)) await this.flush();
  }

  /** Sends raw bytes as they are (for tests of malformed input). */
  async sendRaw(bytes: Uint8Array): Promise<void> {
    this.enqueue(bytes);
    await this.flush();
  }

  async flush(): Promise<void> {
    if (this.error) throw this.error;
    if (this.size === 0) return;
    const data = Buffer.concat(this.chunks, this.size);
    this.chunks = [];
    this.size = 0;
    if (!this.socket.write(data)) {
      await new Promise<void>((resolve, reject) => {
        const onDrain = () => {
          this.socket.off('close', onClose);
          resolve();
        };
        const onClose = () => {
          this.socket.off('drain', onDrain);
          reject(this.error ?? networkError(new Error('connection closed by the collector')));
        };
        this.socket.once('drain', onDrain);
        this.socket.once('close', onClose);
      });
    }
  }

  /**
   * Flushes, half-closes and waits for the collector's reply (it answers once the final profile
   * is written). Rejects with `PROFKIT_E_NETWORK` when the collector refused or ended the stream,
   * or closed without answering, and with `PROFKIT_E_TIMEOUT` after `replyTimeoutMs`.
   */
  async close(): Promise<void> {
    await this.flush();
    await new Promise<void>((resolve, reject) => {
      const replyTimeoutMs = this.options.replyTimeoutMs ?? 120_000;
      const timer = setTimeout(() => {
        this.fail(new ProfkitError(ErrorCodes.TIMEOUT, `${this.address} did not answer within ${replyTimeoutMs} ms of the end of the stream`, { address: this.address, rule: 'reply timeout' }));
      }, replyTimeoutMs);
      const settle = () => {
        clearTimeout(timer);
        // "ok" means the profile is written: a reset after it changes nothing.
        if (this.reply?.status === 'ok') resolve();
        else if (this.error) reject(this.error);
        else reject(new ProfkitError(ErrorCodes.NETWORK, `${this.address} closed the connection without acknowledging the stream`, { address: this.address, rule: 'the collector answers "ok" once the stream is taken' }));
      };
      if (this.socket.destroyed) return settle();
      this.socket.once('close', settle);
      this.socket.end();
    });
  }

  /** Abruptly drops the connection. */
  destroy(): void {
    this.socket.destroy();
  }
}

function networkError(e: Error): ProfkitError {
  return new ProfkitError(ErrorCodes.NETWORK, `collector connection failed: ${e.message}`, { rule: 'connection to the collector' });
}

export async function connectSampler(address: string, options: ClientOptions = {}): Promise<SamplerClient> {
  const a = parseAddress(address);
  const socket = a.kind === 'unix' ? connect({ path: a.path! }) : connect({ host: a.host!, port: a.port! });
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => {
      socket.destroy();
      reject(new ProfkitError(ErrorCodes.TIMEOUT, `connecting to ${address} timed out`, { rule: 'connect timeout' }));
    }, options.timeoutMs ?? 10_000);
    socket.once('connect', () => {
      clearTimeout(t);
      resolve();
    });
    socket.once('error', (e) => {
      clearTimeout(t);
      reject(networkError(e));
    });
  });
  socket.setNoDelay(true);
  return new SamplerClient(socket, options, address);
}

/**
 * Sends a whole recording to a collector: binary recordings record by record (framing checked),
 * JSONL recordings encoded with `generation` (a line's own `generation` wins).
 */
export async function replayTo(bytes: Uint8Array, address: string, options: ClientOptions & { file?: string } = {}): Promise<{ records: number }> {
  // Parse first, so a malformed recording is reported before anything is sent.
  const records: { kind: RecordKindValue; payload: Uint8Array }[] = [];
  if (isRecording(bytes)) {
    const r = new RecordReader(options.file);
    for (const x of r.push(bytes)) records.push(x);
    r.end();
  } else {
    const text = new TextDecoder().decode(bytes);
    let socketSetUp = false;
    for (const e of parseJsonl(text, options.file)) {
      if (e.kind === 'socket-closed') {
        records.push({ kind: RecordKind.SOCKET_CLOSED, payload: new Uint8Array(0) });
        continue;
      }
      if (e.via === 'socket') {
        if (!socketSetUp) {
          records.push({ kind: RecordKind.CHANNEL, payload: encodeChannelMessage({ method: 'SetSharedSocket' }, { generation: 3 }) });
        }
        socketSetUp = true;
        records.push({ kind: RecordKind.DATAGRAM, payload: encodeDatagram(e.call) });
      } else {
        if (e.call.method === 'SetSharedSocket') socketSetUp = true;
        const gen = e.call.method === 'SetSharedSocket' ? 3 : e.generation ?? options.generation ?? 2;
        records.push({ kind: RecordKind.CHANNEL, payload: encodeChannelMessage(e.call, { generation: gen }) });
      }
    }
  }
  const client = await connectSampler(address, options);
  try {
    for (const r of records) await client.sendRecord(r.kind, r.payload);
    await client.close();
  } catch (e) {
    client.destroy();
    throw e;
  }
  return { records: records.length };
}
