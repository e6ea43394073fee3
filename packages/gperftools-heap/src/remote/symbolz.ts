/**
 * Remote symbolization over HTTP. The format-neutral protocol (symbol URL derivation, the
 * `0x…+0x…` POST body, the reply grammar, `num_symbols`, filling names into a profile) lives in
 * `@profkit/core` (`symbolz.ts`) and is re-exported here for compatibility; this file adds the
 * server-side lookup (`SymbolTable`, which numbers locations like this adapter's writers). The
 * HTTP transport and client (`symbolizeRemote`) need Node: `http.ts`.
 */

import { ProfileIndex, formatSymbolReply, type Profile } from '@profkit/core';
import { locationAddresses } from '../write.js';

export {
  MAX_SYMBOL_REQUEST_ADDRESSES,
  applySymbolReply,
  formatSymbolRequest,
  isUnsymbolizableMapping,
  locationsToSymbolize,
  parseNumSymbols,
  parseSymbolReply,
  parseSymbolRequest,
  symbolUrlFor,
} from '@profkit/core';
export type { SymbolReplyEntry } from '@profkit/core';

/**
 * Server side: the names a profile can give for addresses. Each location answers for its address
 * (as `locationAddresses` numbers it, so locations without an address answer for the synthetic
 * address the writers used) with the name of its innermost function; a query for address+1
 * (a caller's return address not yet adjusted, as old clients send) is answered too when no
 * location has that exact address.
 */
export class SymbolTable {
  private readonly names = new Map<bigint, string>();

  add(p: Profile): this {
    const index = new ProfileIndex(p);
    const { addresses } = locationAddresses(p);
    const fid = p.locations.function_id;
    for (let i = 0; i < addresses.length; i++) {
      if (fid[i] === 0) continue;
      const row = index.functions.get(fid[i]!);
      if (row < 0) continue;
      const name = p.functions.name[row]!;
      if (!this.names.has(addresses[i]!)) this.names.set(addresses[i]!, name);
    }
    return this;
  }

  get size(): number {
    return this.names.size;
  }

  lookup(address: bigint): string | undefined {
    return this.names.get(address) ?? (address > 0n ? this.names.get(address - 1n) : undefined);
  }

  /** The reply to a symbol POST: `<token as given>\t<name>\n` per resolved address. */
  reply(body: string): string {
    return formatSymbolReply(body, (a) => this.lookup(a));
  }
}
