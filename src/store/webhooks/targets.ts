import { BlockList, isIP } from 'node:net';

/**
 * Where events are never sent (SSRF): loopback, private, shared (CGNAT), link-local (and with it
 * the cloud metadata services at 169.254.169.254 and fd00:ec2::254, which is unique-local),
 * documentation, benchmarking, multicast and reserved ranges, and "this network". An IPv6
 * address that carries an IPv4 one (mapped, or NAT64's well-known prefix) is judged by that one.
 */
const forbidden = new BlockList();
for (const [network, prefix] of [
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
] as const)
  forbidden.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  forbidden.addSubnet(network, prefix, 'ipv6');

/** The IPv4 address an IPv6 one carries (`::ffff:a.b.c.d`, `64:ff9b::a.b.c.d`, in either notation), if it does. */
function embeddedIpv4(address: string): string | undefined {
  const m = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!m) return undefined;
  if (m[1] !== undefined) return m[1];
  const high = parseInt(m[2] as string, 16);
  const low = parseInt(m[3] as string, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Whether events may be sent to `address` (an IP address, as a socket reports it): false for the ranges above. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !forbidden.check(address, 'ipv4');
  if (family !== 6) return false;
  const v4 = embeddedIpv4(address);
  if (v4 !== undefined) return isIP(v4) === 4 && !forbidden.check(v4, 'ipv4');
  return !forbidden.check(address, 'ipv6');
}

/** Why a URL may not be an endpoint's; undefined when it may (its name is checked again at each delivery). */
export function refusedUrl(text: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:'))
    return allowPrivate ? 'must be an http or https URL' : 'must be an https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry user information (user:password@)';
  if (url.hash !== '' || text.includes('#')) return 'must not have a fragment (#…)';
  if (allowPrivate) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return isPublicAddress(host) ? undefined : `names ${host}, an address events are never sent to`;
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost') || !name.includes('.')) return `names ${host}, which is not a public name`;
  return undefined;
}
