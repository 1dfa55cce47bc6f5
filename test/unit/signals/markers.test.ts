import { BUILT_IN_MARKERS, classifyOutcome, regexProblem } from '@target-health/crawler/events';
import { markerSpecSchema } from '@target-health/crawler/events/marker-spec-schema';
import { pageEvent } from './helpers';

describe('built-in marker catalogue', () => {
  it('is valid against the same schema as per-site markers', () => {
    for (const marker of BUILT_IN_MARKERS) expect(() => markerSpecSchema().parse(marker)).not.toThrow();
  });

  it('has unique ids', () => {
    const ids = BUILT_IN_MARKERS.map((m) => m.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('covers the major vendors', () => {
    const vendors = new Set(BUILT_IN_MARKERS.map((m) => m.vendor));
    for (const vendor of [
      'Cloudflare',
      'Cloudflare Turnstile',
      'hCaptcha',
      'reCAPTCHA',
      'PerimeterX (HUMAN)',
      'DataDome',
      'Imperva Incapsula',
      'Akamai',
      'AWS WAF',
      'generic',
    ]) {
      expect(vendors).toContain(vendor);
    }
  });

  it('has no regex at risk of catastrophic backtracking', () => {
    for (const marker of BUILT_IN_MARKERS) {
      const regexes = [marker.bodyRegex, marker.titleRegex, ...(marker.headers ?? []).map((h) => h.regex)];
      for (const source of regexes) if (source !== undefined) expect(regexProblem(source)).toBeUndefined();
    }
  });

  it('flags dangerous or broken operator regexes', () => {
    expect(regexProblem('(a+)+$')).toMatch(/catastrophic backtracking/);
    expect(regexProblem('(\\w*x)*')).toMatch(/catastrophic backtracking/);
    expect(regexProblem('([a-z')).toMatch(/not a valid regular expression/);
    expect(regexProblem('x'.repeat(301))).toMatch(/longer than 300/);
    expect(regexProblem('/captcha/(?:v1|v2)')).toBeUndefined();
  });
});

describe('fixture pages', () => {
  // status, expected outcome, marker, vendor. Block pages are served with the status a real vendor uses
  // and, where vendors also serve them as 200, with 200 (soft block).
  it.each([
    ['cloudflare-just-a-moment.html', 403, 'challenge', 'cloudflare-chl-opt', 'Cloudflare'],
    ['cloudflare-just-a-moment.html', 503, 'challenge', 'cloudflare-chl-opt', 'Cloudflare'],
    ['cloudflare-blocked.html', 403, 'hard_block', 'cloudflare-attention-required', 'Cloudflare'],
    ['cloudflare-blocked.html', 200, 'soft_block', 'cloudflare-attention-required', 'Cloudflare'],
    // Its title says it first (a strong generic marker outranks a widget).
    ['turnstile.html', 200, 'challenge', 'generic-challenge-title', 'generic'],
    ['turnstile.html', 403, 'challenge', 'generic-challenge-title', 'generic'],
    // Short pages whose only thing to do is the captcha.
    ['hcaptcha.html', 200, 'challenge', 'hcaptcha-widget', 'hCaptcha'],
    ['recaptcha.html', 200, 'challenge', 'recaptcha-widget', 'reCAPTCHA'],
    ['perimeterx-press-and-hold.html', 403, 'challenge', 'perimeterx-captcha', 'PerimeterX (HUMAN)'],
    ['perimeterx-press-and-hold.html', 200, 'challenge', 'perimeterx-captcha', 'PerimeterX (HUMAN)'],
    ['datadome-captcha.html', 403, 'challenge', 'datadome-captcha', 'DataDome'],
    ['incapsula-incident.html', 200, 'soft_block', 'incapsula-incident', 'Imperva Incapsula'],
    ['akamai-access-denied.html', 403, 'hard_block', 'akamai-reference', 'Akamai'],
    ['akamai-access-denied.html', 200, 'soft_block', 'akamai-reference', 'Akamai'],
    ['generic-unusual-traffic.html', 200, 'soft_block', 'generic-block-text', 'generic'],
  ])('%s with status %i → %s by %s', (name, status, outcome, markerId, vendor) => {
    const result = classifyOutcome(pageEvent(name, { status }));
    expect(result).toMatchObject({ outcome, evidence: { markerId, vendor, status } });
    expect(result.reason).toContain(`marker ${markerId} matched`);
  });

  it('a Cloudflare interstitial is found from the cf-mitigated header alone', () => {
    const result = classifyOutcome(
      pageEvent('near-empty.html', { status: 403, headers: { 'cf-mitigated': 'challenge' } }),
    );
    expect(result).toMatchObject({ outcome: 'challenge', evidence: { markerId: 'cloudflare-mitigated-header' } });
    expect(result.reason).toBe(
      'Cloudflare challenge on status 403: marker cloudflare-mitigated-header matched header cf-mitigated: challenge',
    );
  });

  it('a normal product page with reCAPTCHA v3 and Cloudflare JS detections is ok', () => {
    expect(classifyOutcome(pageEvent('product-page.html', { bytes: 148_213 }))).toEqual({
      outcome: 'ok',
      rule: 'status',
      reason: 'status 200',
      evidence: { status: 200 },
    });
  });

  it('a news article saying "blocked" is not a soft block, even judged as a short page', () => {
    expect(
      classifyOutcome(pageEvent('article-mentions-blocked.html', { pageType: 'article', bytes: 61_440 })).outcome,
    ).toBe('ok');
    expect(classifyOutcome(pageEvent('article-mentions-blocked.html', { pageType: 'article' })).outcome).toBe('ok');
  });

  it('captcha widgets need corroboration: a big page embedding one is ok', () => {
    for (const name of ['hcaptcha.html', 'recaptcha.html']) {
      expect(classifyOutcome(pageEvent(name, { bytes: 90_000 })).outcome).toBe('ok');
    }
  });

  it('a short login form with a captcha widget is ok: the widget guards a field to fill in', () => {
    const login =
      '<html><head><title>Sign in</title></head><body><form method="post"><input name="email" type="email">' +
      ('<input type="password" name="pw"><div class="g-recaptcha" data-sitekey="x"></div><button>Sign ' +
        'in</button></form></body></html>');
    expect(classifyOutcome({ status: 200, bodySample: login }).outcome).toBe('ok');
    expect(
      classifyOutcome({
        status: 200,
        bodySample: login.replace('<input name="email" type="email">', '<textarea name="msg"></textarea>'),
      }).outcome,
    ).toBe('ok');
    // The same widget with nothing else to fill in is the page's point: a challenge.
    const wall = login.replace(
      /<input name="email"[^>]*><input type="password"[^>]*>/,
      '<input type="hidden" name="t" value="1">',
    );
    expect(classifyOutcome({ status: 200, bodySample: wall })).toMatchObject({
      outcome: 'challenge',
      evidence: {
        markerId: 'recaptcha-widget',
        corroboratedBy: `short page with no field to fill in (${wall.length} bytes)`,
      },
    });
  });

  it("a vendor's script counts on a bare page or a refusal status, never on an app shell with a title", () => {
    const stub =
      '<html><head><script src="/_Incapsula_Resource?SWJIYLWA=719d34d31c8e3a6e6fffd425f7e032f3"></script></head' +
      '><body></body></html>';
    expect(classifyOutcome({ status: 200, bodySample: stub })).toMatchObject({
      outcome: 'challenge',
      evidence: { markerId: 'incapsula-resource' },
    });
    expect(classifyOutcome({ status: 200, bodySample: stub }).reason).toContain(
      "(vendor's script, corroborated by bare page (",
    );
    const shell = stub.replace('<head>', '<head><title>Analytics</title>');
    expect(classifyOutcome({ status: 200, bodySample: shell }).outcome).toBe('ok');
    const withText = stub.replace('<body>', `<body><p>${'Our quarterly results are in. '.repeat(6)}</p>`);
    expect(classifyOutcome({ status: 200, bodySample: withText }).outcome).toBe('ok');
    expect(classifyOutcome({ status: 503, bodySample: shell })).toMatchObject({
      outcome: 'challenge',
      evidence: { corroboratedBy: 'status 503' },
    });
  });

  it('a big page still counts as a challenge when its title says so', () => {
    expect(classifyOutcome(pageEvent('turnstile.html', { bytes: 90_000 }))).toMatchObject({
      outcome: 'challenge',
      evidence: { markerId: 'generic-challenge-title', matched: 'title "security check | example outdoor shop"' },
    });
  });

  it('weak markers are corroborated by a refusal status even on a big page', () => {
    const result = classifyOutcome(pageEvent('recaptcha.html', { status: 429, bytes: 90_000 }));
    expect(result).toMatchObject({
      outcome: 'challenge',
      evidence: { markerId: 'recaptcha-widget', corroboratedBy: 'status 429' },
    });
    expect(result.reason).toContain('(captcha widget, corroborated by status 429)');
  });

  it('the near-empty page is ok on its own (no content markers)', () => {
    expect(classifyOutcome(pageEvent('near-empty.html')).outcome).toBe('ok');
  });
});

describe('titles and texts in the languages a fleet crawls', () => {
  it.each([
    ['Zugriff verweigert', 'block'],
    ['Acc&egrave;s refus&eacute; | Boutique', 'block'],
    ['Acceso denegado', 'block'],
    ['Acesso negado', 'block'],
    ['Accesso negato', 'block'],
    ['アクセスが拒否されました', 'block'],
    ['访问被拒绝', 'block'],
    ['Доступ запрещен', 'block'],
    ['Zu viele Anfragen', 'block'],
    ['Sicherheitsüberprüfung', 'challenge'],
    ['V&eacute;rification de s&eacute;curit&eacute;', 'challenge'],
    ['&iquest;Eres un robot?', 'challenge'],
    ['Проверка безопасности', 'challenge'],
    ['Einen Moment bitte…', 'challenge'],
  ])('title "%s" on a 403 → %s', (title, kind) => {
    const result = classifyOutcome({
      status: 403,
      bodySample: `<html><head><title>${title}</title></head><body><p>…</p></body></html>`,
      bytes: 20_000,
    });
    expect(result.outcome).toBe(kind === 'block' ? 'hard_block' : 'challenge');
    expect(result.rule).toBe(kind === 'block' ? 'block_marker' : 'challenge_marker');
  });

  it('an article whose title starts with the words but goes on is not a block page', () => {
    const result = classifyOutcome({
      status: 200,
      bodySample: '<title>Zugriff verweigerter Daten: was das Urteil bedeutet</title><p>Lorem</p>',
      bytes: 90_000,
    });
    expect(result.outcome).toBe('ok');
  });
});
