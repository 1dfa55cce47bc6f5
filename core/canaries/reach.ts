/**
 * What a canary may reach (docs/canaries.md, "Who defines canaries and what they may reach"). A canary
 * fetches a page and stores what it saw as evidence that people read, so a canary pointed at an
 * internal service (the Temporal UI's API, a metadata endpoint, a database console) would copy that
 * service's answers into notifications. Two rules, checked when a canary is defined and again before
 * and during every fetch (server/canary-runner/fetch.ts checks each address the host name resolves to, at
 * connect time):
 *
 * 1. **Host**: the URL's host is the canary's site or one of its subdomains.
 * 2. **Address**: every address it connects to is public unicast — not loopback, private, link-local,
 *    unique-local, carrier-grade NAT, multicast, reserved or unspecified.
 *
 * An operator widens both with TARGET_HEALTH_CANARY_ALLOWED_TARGETS: host names (each with its
 * subdomains) and addresses or CIDR ranges that canaries may reach anyway (a site on an internal
 * network, a test server on 127.0.0.1). Pure: no DNS here; the runner resolves and asks
 * {@link addressReachProblem}.
 */
import ipaddr from 'ipaddr.js';
import { describeValue } from '@target-health/crawler/events/zod-issues';
import { redactPageUrl } from './page-url';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

export const ALLOWED_TARGETS_VARIABLE = 'TARGET_HEALTH_CANARY_ALLOWED_TARGETS';

export interface ReachPolicy {
  /** Host names (lower-case ASCII) canaries may fetch besides their own site, each with its subdomains. */
  hosts: readonly string[];
  /** Addresses and ranges canaries may reach although they are not public, or not their site's. */
  ranges: ReadonlyArray<readonly [Address, number]>;
}

/** Nothing beyond each canary's own site on public addresses. */
export const DEFAULT_REACH: ReachPolicy = Object.freeze({ hosts: [], ranges: [] });

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const EXAMPLE = '"127.0.0.1, 10.20.0.0/16, intranet.example.net"';

export type ReachPolicyResult = { ok: true; policy: ReachPolicy } | { ok: false; problem: string };

/** Parses TARGET_HEALTH_CANARY_ALLOWED_TARGETS: a comma-separated list of host names, addresses and CIDR ranges. */
export function parseReachPolicy(raw: string | undefined): ReachPolicyResult {
  const hosts: string[] = [];
  const ranges: Array<readonly [Address, number]> = [];
  for (const entry of (raw ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')) {
    const bare = entry.replace(/^\[(.*)\]$/, '$1');
    if (ipaddr.isValidCIDR(bare)) {
      const [address, bits] = ipaddr.parseCIDR(bare);
      ranges.push([
        unmap(address),
        address.kind() === 'ipv6' && unmap(address).kind() === 'ipv4' ? Math.max(0, bits - 96) : bits,
      ]);
    } else if (isIpLiteral(bare)) {
      const address = unmap(ipaddr.parse(bare));
      ranges.push([address, address.kind() === 'ipv4' ? 32 : 128]);
    } else if (HOST_NAME.test(entry.toLowerCase().replace(/\.$/, ''))) {
      hosts.push(entry.toLowerCase().replace(/\.$/, ''));
    } else {
      return {
        ok: false,
        problem:
          `${JSON.stringify(entry)} is neither a host name, an IP address nor a CIDR range; give a ` +
          `comma-separated list like ${EXAMPLE}`,
      };
    }
  }
  return { ok: true, policy: { hosts, ranges } };
}

/** The policy as written, for messages and logs. */
export function describeReachPolicy(policy: ReachPolicy): string {
  return [...policy.hosts, ...policy.ranges.map(([a, bits]) => `${a.toString()}/${bits}`)].join(', ');
}

/**
 * Why a canary of `site` may not fetch `url`, or undefined. Checks the host rule, and the address rule
 * for a URL whose host is an IP address (a host name is checked when it is resolved). `site` undefined:
 * only the address rule.
 */
export function urlReachProblem(url: string, site: string | undefined, policy: ReachPolicy): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return undefined; // not a URL: the definition's URL check says so
  }
  const shown = describeValue(redactPageUrl(url), 200);
  const literal = host.replace(/^\[(.*)\]$/, '$1');
  if (isIpLiteral(literal)) {
    const address = unmap(ipaddr.parse(literal));
    const allowed = inRanges(address, policy);
    if (site !== undefined && literal !== site && !allowed) {
      return (
        `${shown} is an IP address, not a page of ${site}; a canary may only fetch its own site (${site} or its ` +
        `subdomains) — an operator can allow this address with ` +
        `${ALLOWED_TARGETS_VARIABLE}="${address.toString()}"`
      );
    }
    const problem = addressReachProblem(address.toString(), policy);
    return problem === undefined ? undefined : `${shown} points at ${problem}`;
  }
  if (site === undefined || onSite(host, site) || policy.hosts.some((h) => onSite(host, h))) return undefined;
  return (
    `${shown} is not on ${site}; a canary may only fetch its own site (${site} or its subdomains) — an operator ` +
    `can allow other hosts with ${ALLOWED_TARGETS_VARIABLE}="${host}"`
  );
}

/**
 * Why a canary may not connect to `address` (an IP address as text), or undefined. The reason starts
 * with the address: "127.0.0.1, a loopback address; canaries only reach public addresses — …".
 */
export function addressReachProblem(address: string, policy: ReachPolicy): string | undefined {
  const bare = address.replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return `${JSON.stringify(address)}, which is not an IP address`;
  const parsed = unmap(ipaddr.parse(bare));
  const range = parsed.range();
  if (range === 'unicast' || inRanges(parsed, policy)) return undefined;
  return (
    `${parsed.toString()}, a ${RANGE_NAMES[range] ?? range} address; canaries only reach public addresses — an ` +
    `operator can allow it with ${ALLOWED_TARGETS_VARIABLE}="${parsed.toString()}"`
  );
}

const RANGE_NAMES: Readonly<Record<string, string>> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
  reserved: 'reserved',
  uniqueLocal: 'unique-local',
  rfc6052: 'NAT64',
  rfc6145: 'IPv4-translated',
  '6to4': '6to4',
  teredo: 'Teredo',
};

function onSite(host: string, site: string): boolean {
  return host === site || host.endsWith(`.${site}`);
}

function isIpLiteral(text: string): boolean {
  return ipaddr.IPv4.isValidFourPartDecimal(text) || (text.includes(':') && ipaddr.IPv6.isValid(text));
}

/** IPv4-mapped IPv6 (::ffff:127.0.0.1) is the IPv4 address it carries. */
function unmap(address: Address): Address {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;
}

function inRanges(address: Address, policy: ReachPolicy): boolean {
  return policy.ranges.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));
}
