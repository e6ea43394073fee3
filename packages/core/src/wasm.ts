/**
 * WebAssembly modules carried inline (base64 in a generated .ts file, so bundles and browsers need
 * no fetch), compiled once per process: the shared part of the adapters' small modules (rprof's
 * line index, pprof's sample writer). Platform-neutral: it uses the global `WebAssembly` and `atob`
 * only (the packages compile against the ES lib, so the part of the API used is declared here).
 */

/** The part of `WebAssembly.Memory` the modules' callers use. */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

/** A compiled module, made into instances by `instantiateWasm`. */
export type WasmModule = object;

interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: object) => { readonly exports: unknown };
}

const compiledByBase64 = new Map<string, WasmModule | null>();

/**
 * The module whose bytes `base64` holds, compiled on first use and kept for the process; null
 * without WebAssembly or where compiling is refused (e.g. a Content-Security-Policy without
 * 'wasm-unsafe-eval'), for the caller's JavaScript path. Synchronous: the modules are a few KB,
 * which browsers compile on the main thread.
 */
export function compileInlineWasm(base64: string): WasmModule | null {
  let compiled = compiledByBase64.get(base64);
  if (compiled === undefined) {
    compiled = null;
    try {
      const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
      if (wasm !== undefined) compiled = new wasm.Module(decodeBase64(base64));
    } catch {
      // Not available here: the caller's JavaScript path does the same work.
    }
    compiledByBase64.set(base64, compiled);
  }
  return compiled;
}

/** A new instance of a module `compileInlineWasm` gave (no imports); its exports. */
export function instantiateWasm(module: WasmModule): unknown {
  const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  return new wasm.Instance(module, {}).exports;
}

function decodeBase64(base64: string): Uint8Array {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}
