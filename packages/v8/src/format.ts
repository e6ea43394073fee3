/**
 * The two JSON formats of V8's profilers, as Node.js (`--cpu-prof`, `--heap-prof`) and Chrome
 * DevTools save them. Field names are V8's (the DevTools protocol's `Profiler.Profile` and
 * `HeapProfiler.SamplingHeapProfile`).
 */

/** The name of this adapter, the key of its extension data (`profile['.extensions'].v8`). */
export const ADAPTER_NAME = 'v8';
export const CPU_FORMAT = 'v8-cpuprofile';
export const HEAP_FORMAT = 'v8-heapprofile';

/**
 * Where a function is. `lineNumber` and `columnNumber` are 0-based (the DevTools protocol's
 * `Runtime.CallFrame`) and -1 when V8 has no position (the `(root)`, `(program)`, `(idle)` and
 * `(garbage collector)` pseudo frames, native code).
 */
export interface V8CallFrame {
  functionName: string;
  scriptId: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

/** Self samples of a node on one source line; `line` is 1-based (unlike `V8CallFrame`'s). */
export interface V8PositionTick {
  line: number;
  ticks: number;
}

/** One node of a `.cpuprofile`'s flat call tree. */
export interface V8CpuProfileNode {
  id: number;
  callFrame: V8CallFrame;
  hitCount?: number;
  children?: number[];
  /** Only in some producers (Chrome's trace events); the reader also accepts it. */
  parent?: number;
  positionTicks?: V8PositionTick[];
  deoptReason?: string;
}

/** A `.cpuprofile`: times are microseconds of a monotonic clock (not the epoch). */
export interface V8CpuProfile {
  nodes: V8CpuProfileNode[];
  startTime: number;
  endTime: number;
  /** The node id of each sample, in time order. */
  samples: number[];
  /** Microseconds from the previous sample (from `startTime` for the first). */
  timeDeltas: number[];
}

/** One node of a `.heapprofile`'s nested allocation tree. */
export interface V8HeapProfileNode {
  callFrame: V8CallFrame;
  /** Bytes of the sampled allocations still alive at this node itself. */
  selfSize: number;
  id: number;
  children: V8HeapProfileNode[];
}

/** One sampled allocation: its size in bytes, the node that allocated it, its order. */
export interface V8HeapSample {
  size: number;
  nodeId: number;
  ordinal: number;
}

export interface V8HeapProfile {
  head: V8HeapProfileNode;
  samples: V8HeapSample[];
}

/** Pseudo frames V8 adds; `(root)` is the tree's root and never a frame of a stack. */
export const ROOT_NAME = '(root)';
export const PROGRAM_NAME = '(program)';
export const IDLE_NAME = '(idle)';
export const GC_NAME = '(garbage collector)';
/** What DevTools shows for a function without a name (V8 writes `""`). */
export const ANONYMOUS_NAME = '(anonymous)';
