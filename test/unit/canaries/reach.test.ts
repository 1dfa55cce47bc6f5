/**
 * What canaries may reach (core/canaries/reach.ts): the host rule against the canary's site, the address rule
 * for every address, and the operator's TARGET_HEALTH_CANARY_ALLOWED_TARGETS.
 */
import {
  addressReachProblem,
  DEFAULT_REACH,
  describeReachPolicy,
  parseReachPolicy,
  type ReachPolicy,
  urlReachProblem,
} from '../../../core/canaries/reach';

function policy(raw: string): ReachPolicy {
  const parsed = parseReachPolicy(raw);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.policy;
}

const SITE = 'shop.example.com';

describe('the host rule', () => {
  test.each([
    ['https://shop.example.com/p/1', true],
    ['https://SHOP.example.com./p/1', true],
    ['https://www.shop.example.com/p/1', true],
    ['https://api.eu.shop.example.com/v1', true],
    ['https://example.com/', false],
    ['https://evilshop.example.com/', false],
    ['https://shop.example.com.evil.net/', false],
    ['http://localhost:8233/', false],
  ])('%s → allowed: %s', (url, allowed) => {
    expect(urlReachProblem(url, SITE, DEFAULT_REACH) === undefined).toBe(allowed);
  });

  test('operator-listed hosts (with their subdomains) are allowed for every canary', () => {
    const allowed = policy('static.example-cdn.net');
    expect(urlReachProblem('https://static.example-cdn.net/p.json', SITE, allowed)).toBeUndefined();
    expect(urlReachProblem('https://img.static.example-cdn.net/p.json', SITE, allowed)).toBeUndefined();
    expect(urlReachProblem('https://example-cdn.net/', SITE, allowed)).toMatch(/is not on shop\.example\.com/);
  });
});

describe('the address rule', () => {
  test.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fd00::1', 'unique-local'],
    ['::ffff:127.0.0.1', 'loopback'],
  ])('%s is refused (%s)', (address, range) => {
    expect(addressReachProblem(address, DEFAULT_REACH)).toMatch(
      new RegExp(
        `, an? ${range} address; canaries only reach public addresses — an operator can allow it with ` +
          `TARGET_HEALTH_CANARY_ALLOWED_TARGETS=`,
      ),
    );
  });

  test.each(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c', '1.1.1.1'])(
    '%s (public) is allowed',
    (address) => {
      expect(addressReachProblem(address, DEFAULT_REACH)).toBeUndefined();
    },
  );

  test('an IPv4-mapped IPv6 address is judged as the IPv4 address it carries', () => {
    expect(addressReachProblem('::ffff:10.0.0.1', DEFAULT_REACH)).toMatch(/^10\.0\.0\.1, a private address/);
    expect(addressReachProblem('::ffff:10.0.0.1', policy('10.0.0.0/8'))).toBeUndefined();
  });

  test('allowed addresses and ranges are exactly what is listed', () => {
    const allowed = policy('127.0.0.1, 10.20.0.0/16, ::1');
    expect(addressReachProblem('127.0.0.1', allowed)).toBeUndefined();
    expect(addressReachProblem('127.0.0.2', allowed)).toMatch(/loopback/);
    expect(addressReachProblem('10.20.9.9', allowed)).toBeUndefined();
    expect(addressReachProblem('10.21.0.1', allowed)).toMatch(/private/);
    expect(addressReachProblem('::1', allowed)).toBeUndefined();
  });

  test('URLs naming an address: every spelling the URL parser accepts is normalised first', () => {
    for (const url of [
      'http://127.0.0.1/',
      'http://2130706433/',
      'http://0x7f.0.0.1/',
      'http://127.1/',
      'http://[::1]/',
      'http://[::ffff:7f00:1]/',
      'http://0.0.0.0/',
    ]) {
      expect(urlReachProblem(url, undefined, DEFAULT_REACH)).toMatch(
        /points at .*, an? (loopback|unspecified) address/,
      );
      expect(urlReachProblem(url, SITE, DEFAULT_REACH)).toMatch(/is an IP address, not a page of shop\.example\.com/);
    }
    expect(
      urlReachProblem('http://169.254.169.254/latest/meta-data/', SITE, policy('169.254.169.254')),
    ).toBeUndefined();
  });

  test('a site that is itself an address may fetch itself, if the address is public', () => {
    expect(urlReachProblem('http://93.184.215.14/p', '93.184.215.14', DEFAULT_REACH)).toBeUndefined();
    expect(urlReachProblem('http://10.0.0.7/p', '10.0.0.7', DEFAULT_REACH)).toMatch(
      /points at 10\.0\.0\.7, a private address/,
    );
  });
});

describe('TARGET_HEALTH_CANARY_ALLOWED_TARGETS', () => {
  test('a comma-separated list of host names, addresses and CIDR ranges', () => {
    const parsed = policy(' 127.0.0.1 , [::1], 10.20.0.0/16, Intranet.Example.NET., localhost ');
    expect(parsed.hosts).toEqual(['intranet.example.net', 'localhost']);
    expect(describeReachPolicy(parsed)).toBe('intranet.example.net, localhost, 127.0.0.1/32, ::1/128, 10.20.0.0/16');
    expect(policy('')).toEqual(DEFAULT_REACH);
  });

  test('anything else is one line saying what an entry may be', () => {
    for (const bad of ['http://intranet/', '10.0.0.0/33', 'bad host', '*.example.com']) {
      expect(parseReachPolicy(bad)).toEqual({
        ok: false,
        problem:
          `${JSON.stringify(bad)} is neither a host name, an IP address nor a CIDR range; give a comma-separated ` +
          `list like "127.0.0.1, 10.20.0.0/16, intranet.example.net"`,
      });
    }
  });
});
