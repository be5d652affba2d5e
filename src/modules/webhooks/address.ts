import dns from 'node:dns';
import net from 'node:net';

/**
 * Where live endpoints may not point (SSRF): loopback, private, carrier-grade NAT, link-local (cloud metadata at
 * 169.254.169.254), unspecified, documentation, benchmarking, multicast and reserved ranges, and the IPv6
 * equivalents, including IPv4 addresses tunnelled in IPv6 (mapped, NAT64, 6to4, Teredo).
 */
const blocked4 = new net.BlockList();
const blocked6 = new net.BlockList(); // separate: a v6 rule such as ::ffff:0:0/96 would also match every IPv4 address
for (const [net4, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) {
  blocked4.addSubnet(net4, prefix, 'ipv4');
}
for (const [net6, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 32],
  ['2001:db8::', 32], ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) {
  blocked6.addSubnet(net6, prefix, 'ipv6');
}

/** True for an address a live endpoint may not reach (and for anything that is not an IP address). */
export function isForbiddenAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = net.isIP(ip);
  if (family === 4) return blocked4.check(ip, 'ipv4');
  if (family !== 6) return true;
  // IPv4-mapped (::ffff:a.b.c.d, or its hex form): the IPv4 rules decide.
  const mapped = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return isForbiddenAddress(mapped[1]);
  const hex = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
  if (hex) {
    const [hi, lo] = [parseInt(hex[1], 16), parseInt(hex[2], 16)];
    return isForbiddenAddress(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  }
  return blocked6.check(ip, 'ipv6');
}

export type LookupAll = (hostname: string) => Promise<{ address: string; family: number }[]>;

const dnsLookupAll: LookupAll = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });
let hostLookup: LookupAll = dnsLookupAll;

/** How live endpoint host names are resolved, at creation and on every connection (the system resolver). */
export const systemLookupAll: LookupAll = (hostname) => hostLookup(hostname);

/** Replaces the resolver (tests simulate names that resolve to private addresses, or change answers); null: DNS. */
export function useHostLookup(lookup: LookupAll | null): void {
  hostLookup = lookup ?? dnsLookupAll;
}

export class ForbiddenAddressError extends Error {
  readonly code = 'EFORBIDDENADDRESS';
  constructor(readonly hostname: string, readonly address: string) {
    super(`${hostname} resolves to ${address}, a loopback, private, link-local or reserved address`);
  }
}

/**
 * Why a live endpoint URL is refused, or null. Names that do not resolve now are accepted: the address is checked
 * again, on every connection, when delivering.
 */
export async function liveUrlProblem(url: URL, lookupAll: LookupAll = systemLookupAll): Promise<string | null> {
  if (url.protocol !== 'https:') return 'Live endpoints must use https.';
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (net.isIP(host)) {
    return isForbiddenAddress(host) ? `${host} is a loopback, private, link-local or reserved address; live endpoints must be public.` : null;
  }
  if (host === 'localhost' || host.endsWith('.localhost') || !host.includes('.')) {
    return `${host} is not a public host name; live endpoints must be public.`;
  }
  let addresses: { address: string }[];
  try {
    addresses = await Promise.race([
      lookupAll(host),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 3000).unref()),
    ]);
  } catch {
    return null;
  }
  const bad = addresses.find((a) => isForbiddenAddress(a.address));
  return bad ? `${host} resolves to ${bad.address}, a loopback, private, link-local or reserved address; live endpoints must be public.` : null;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that refuses forbidden addresses: the address checked is the one connected to,
 * so a name that changes its answer between the check and the connection (DNS rebinding) is still refused.
 */
export function guardedLookup(lookupAll: LookupAll = systemLookupAll) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    lookupAll(hostname).then(
      (addresses) => {
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = addresses.filter((a) => !family || a.family === family);
        const bad = usable.find((a) => isForbiddenAddress(a.address));
        if (bad) return callback(new ForbiddenAddressError(hostname, bad.address), '');
        if (!usable.length) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
        if (options.all) return callback(null, usable as dns.LookupAddress[]);
        callback(null, usable[0].address, usable[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}
