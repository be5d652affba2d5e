import dns from 'node:dns';
import net from 'node:net';

/**
 * Where webhook endpoints may not point (SSRF), in either mode, unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is on
 * (docs/webhooks.md): loopback, private, carrier-grade NAT, link-local (cloud metadata at 169.254.169.254),
 * unspecified, documentation, benchmarking, multicast and reserved ranges, and the IPv6 equivalents, including IPv4
 * addresses tunnelled in IPv6 (mapped, compatible, translated, NAT64, 6to4, Teredo).
 */
const blocked4 = new net.BlockList();
const blocked6 = new net.BlockList(); // separate: a v6 rule such as ::ffff:0:0/96 would also match every IPv4 address
for (const [net4, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked4.addSubnet(net4, prefix, 'ipv4');
}
for (const [net6, prefix] of [
  ['::', 96],
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked6.addSubnet(net6, prefix, 'ipv6');
}

/** True for an address a webhook endpoint may not reach (and for anything that is not an IP address). */
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

/** How endpoint host names are resolved, at creation and on every connection (the system resolver). */
export const systemLookupAll: LookupAll = (hostname) => hostLookup(hostname);

/** Replaces the resolver (tests simulate names that resolve to private addresses, or change answers); null: DNS. */
export function useHostLookup(lookup: LookupAll | null): void {
  hostLookup = lookup ?? dnsLookupAll;
}

const PRIVATE = 'a loopback, private, link-local or reserved address';

export class ForbiddenAddressError extends Error {
  readonly code = 'EFORBIDDENADDRESS';
  constructor(
    readonly hostname: string,
    readonly address: string,
  ) {
    super(`${hostname} resolves to ${address}, ${PRIVATE}`);
  }
}

/** Private-use and special-use name suffixes, and Google's public alias of its metadata server. */
const INTERNAL_SUFFIXES = [
  'localhost',
  'localdomain',
  'local',
  'internal',
  'intranet',
  'lan',
  'home',
  'corp',
  'home.arpa',
];
const METADATA_NAMES = new Set(['metadata.goog']);

/**
 * True for names that only mean something inside a network, whatever they resolve to from here: single labels
 * (`localhost`, `metadata`, `instance-data`), names under those suffixes (`.localhost`, `.local`, `.internal`:
 * metadata.google.internal, instance-data.ec2.internal, ...) and metadata.goog.
 */
export function isInternalName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (!name.includes('.') || METADATA_NAMES.has(name)) return true;
  return INTERNAL_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`));
}

export interface EndpointRules {
  live: boolean;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: any address may be reached (live endpoints still need https). */
  allowPrivateNetworks: boolean;
}

const NOT_PUBLIC = 'webhook endpoints must be reachable on the public internet';
const bare = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/**
 * Why a webhook URL is refused, judged from the URL alone (scheme, IP literal, internal name), or null. Checked at
 * creation and before every attempt: connections to IP literals skip the resolver, so guardedLookup never sees them.
 */
export function urlProblem(url: URL, rules: EndpointRules): string | null {
  if (rules.live && url.protocol !== 'https:') return 'live endpoints must use https.';
  if (rules.allowPrivateNetworks) return null;
  const host = bare(url);
  if (net.isIP(host)) return isForbiddenAddress(host) ? `${host} is ${PRIVATE}; ${NOT_PUBLIC}.` : null;
  return isInternalName(host) ? `${host} is not a public host name; ${NOT_PUBLIC}.` : null;
}

/**
 * urlProblem, then what the name resolves to now (at creation). Names that do not resolve now are accepted: the
 * address is checked again, on every connection, when delivering.
 */
export async function resolvedUrlProblem(
  url: URL,
  rules: EndpointRules,
  lookupAll: LookupAll = systemLookupAll,
): Promise<string | null> {
  const problem = urlProblem(url, rules);
  const host = bare(url);
  if (problem || rules.allowPrivateNetworks || net.isIP(host)) return problem;
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
  return bad ? `${host} resolves to ${bad.address}, ${PRIVATE}; ${NOT_PUBLIC}.` : null;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for http(s) agents that refuses forbidden addresses (unless `allowPrivateNetworks`): the address checked
 * is the one connected to, so a name that changes its answer between the check and the connection (DNS rebinding)
 * is still refused.
 */
export function guardedLookup(lookupAll: LookupAll = systemLookupAll, allowPrivateNetworks = false) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    lookupAll(hostname).then(
      (addresses) => {
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = addresses.filter((a) => !family || a.family === family);
        const bad = allowPrivateNetworks ? undefined : usable.find((a) => isForbiddenAddress(a.address));
        if (bad) return callback(new ForbiddenAddressError(hostname, bad.address), '');
        if (!usable.length)
          return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
        if (options.all) return callback(null, usable as dns.LookupAddress[]);
        callback(null, usable[0].address, usable[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}
