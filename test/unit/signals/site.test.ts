import { normaliseSite, SiteNameError, tryNormaliseSite } from '@target-health/crawler/events';
import { punycodeEncode } from '@target-health/crawler/events/punycode';

describe('normaliseSite', () => {
  it.each([
    ['shop.example.com', 'shop.example.com'],
    ['Shop.Example.COM', 'shop.example.com'],
    ['  shop.example.com  ', 'shop.example.com'],
    ['shop.example.com.', 'shop.example.com'],
    ['https://shop.example.com/p/1?x=2#top', 'shop.example.com'],
    ['HTTP://Shop.Example.com:8443', 'shop.example.com'],
    ['//shop.example.com/path', 'shop.example.com'],
    ['https://user:secret@shop.example.com/', 'shop.example.com'],
    ['shop.example.com:443', 'shop.example.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['MÜNCHEN.de', 'xn--mnchen-3ya.de'],
    ['例え。テスト', 'xn--r8jz45g.xn--zckzah'],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['203.0.113.57', '203.0.113.57'],
    ['a-b.co.uk', 'a-b.co.uk'],
  ])('%s → %s', (input, expected) => {
    expect(normaliseSite(input)).toBe(expected);
  });

  it.each([
    ['', 'it is empty'],
    ['http://x', 'single label'],
    ['localhost', 'single label'],
    ['shop..example.com', 'empty label'],
    ['shop example.com', 'white space'],
    ['-shop.example.com', 'label "-shop"'],
    ['shop_x.example.com', 'label "shop_x"'],
    ['[2001:db8::1]', 'IPv6'],
    ['999.1.1.1', 'IPv4'],
    ['example.123', 'all digits'],
    ['a:b:c', '":"'],
    [`${'a'.repeat(64)}.com`, 'at most 63'],
    [`${'abcdefghi.'.repeat(26)}com`, 'longer than 253'],
  ])('rejects %j (%s)', (input, detail) => {
    const result = tryNormaliseSite(input);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toBeInstanceOf(SiteNameError);
      expect(result.error.message).toContain('must be a host name like shop.example.com (got ');
      expect(result.error.message).toContain(detail);
    }
    expect(() => normaliseSite(input)).toThrow(SiteNameError);
  });

  it('names the input and the fix for a scheme-only URL', () => {
    expect(() => normaliseSite('http://x')).toThrow(
      'must be a host name like shop.example.com (got "http://x"): "x" is a single label; a site needs at ' +
        'least two, e.g. x.com',
    );
  });
});

describe('punycodeEncode (RFC 3492 samples)', () => {
  it.each([
    ['bücher', 'bcher-kva'],
    ['münchen', 'mnchen-3ya'],
    ['例え', 'r8jz45g'],
    ['テスト', 'zckzah'],
    ['他们为什么不说中文', 'ihqwcrb4cv8a8dqg056pqjye'],
    ['ليهمابتكلموشعربي؟', 'egbpdaj6bu4bxfgehfvwxn'],
  ])('%s → %s', (label, expected) => {
    expect(punycodeEncode(label)).toBe(expected);
  });
});
