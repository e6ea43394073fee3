/**
 * A small client of the live collector: connects over TCP or a unix socket, sends the stream
 * header and then records (encoded calls, or raw records from a recording), with buffering and
 * back-pressure. Also `replayTo`, which sends a whole recording (binary or JSONL).
 */

import { connect, type Socket } from 'node:net';
import { ErrorCodes, ProfkitError } from '@profkit/core';
import { encodeChannelMessage, encodeDatagram, type Generation, type SamplerCall } from './fidl/protocol.js';
import { frameRecord, isRecording, parseJsonl, RecordKind, recordingHeader, RecordReader, type RecordKindValue } from './recording.js';
import { parseAddress } from './server.js';

export interface ClientOptions {
  /** Protocol generation for encoded calls (default 2). */
  generation?: Generation;
  /** Connection timeout (default 10 s). */
  timeoutMs?: number;
  /** Bytes buffered before a write (default 64 KiB). */
  batchBytes?: number;
}

export class SamplerClient {
  private chunks: Uint8Array[] = [];
  private size = 0;
  private socketSetUp = false;
  private error: Error | undefined;
  sentRecords = 0;

  constructor(
    private readonly socket: Socket,
    private readonly options: ClientOptions,
  ) {
    socket.on('error', (e) => (this.error = e));
    this.enqueue(recordingHeader());
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
    if (this.error) throw networkError(this.error);
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
          reject(networkError(this.error ?? new Error('connection closed by the collector')));
        };
        this.socket.once('drain', onDrain);
        this.socket.once('close', onClose);
      });
    }
  }

  /** Flushes and closes the connection (the collector then writes the final profile). */
  async close(): Promise<void> {
    await this.flush();
    await new Promise<void>((resolve) => {
      if (this.socket.destroyed) return resolve();
      this.socket.once('close', () => resolve());
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
  return new SamplerClient(socket, options);
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
