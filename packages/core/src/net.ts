/**
 * Small, platform-neutral helpers about network addresses, shared by the adapters' servers (the
 * gperftools `serve` command, the Fuchsia collector) so that they agree on what "local only" means.
 */

/**
 * Dotted-quad IPv4 octets, or undefined when `s` is not exactly `a.b.c.d` with 0 <= each <= 255
 * and no leading zeros (which some resolvers read as octal: `0127.0.0.1` is not 127.0.0.1).
 */
function ipv4Octets(s: string): number[] | undefined {
  const octet = '(0|[1-9]\\d{0,2})';
  const m = new RegExp(`^${octet}\\.${octet}\\.${octet}\\.${octet}$`).exec(s);
  if (!m) return undefined;
  const octets = m.slice(1).map(Number);
  return octets.every((o) => o <= 255) ? octets : undefined;
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a trailing dotted quad allowed), or undefined. */
function ipv6Groups(s: string): number[] | undefined {
  if (!s.includes(':')) return undefined;
  let text = s;
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    // A trailing dotted quad (`::ffff:127.0.0.1`) stands for the last two groups.
    const v4 = ipv4Octets(text.slice(lastColon + 1));
    if (!v4) return undefined;
    text = `${text.slice(0, lastColon + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string): number[] | undefined => {
    if (part === '') return [];
    const groups = part.split(':');
    if (!groups.every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return undefined;
    return groups.map((g) => parseInt(g, 16));
  };
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  if (!head || !rest) return undefined;
  const given = head.length + rest.length;
  if (halves.length === 1 ? given !== 8 : given > 7) return undefined;
  return [...head, ...new Array<number>(8 - given).fill(0), ...rest];
}

/**
 * True when `host` names the local machine only: `localhost`, an IPv4 address in 127.0.0.0/8,
 * the IPv6 loopback `::1` (any spelling, brackets allowed) or an IPv4-mapped loopback
 * (`::ffff:127.0.0.1`). Wildcards (`0.0.0.0`, `::`) and host names are not loopback: a server
 * bound there can be reached from other machines.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (h === 'localhost') return true;
  const v4 = ipv4Octets(h);
  if (v4) return v4[0] === 127;
  const v6 = ipv6Groups(h);
  if (!v6) return false;
  if (v6.slice(0, 7).every((g) => g === 0)) return v6[7] === 1;
  // IPv4-mapped (::ffff:a.b.c.d): loopback when a.b.c.d is.
  return v6.slice(0, 5).every((g) => g === 0) && v6[5] === 0xffff && v6[6]! >> 8 === 127;
}
