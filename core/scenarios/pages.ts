/**
 * What the crawler gets back, by kind of response: status or network error, headers, the first bytes of
 * the body, the full size. Block and challenge pages are short imitations of the real vendors' pages
 * (Cloudflare, Akamai, DataDome, PerimeterX, nginx), with their tell-tale tokens, so the classifier is
 * exercised on content rather than told the answer. Samples stay under 2 KB.
 *
 * Normal pages carry no body (a crawler sends the body of small or non-200 pages, and of a small sample
 * of the rest — see traffic.ts); when one is sampled, its head carries the scripts protected sites put
 * on every normal page (Cloudflare's jsd, DataDome's tags.js, PerimeterX's sensor, reCAPTCHA v3), the
 * classic false-positive bait.
 */
import type { NetworkError } from '@target-health/crawler/events/event';
import type { PageType } from './fleet';
import type { Rng } from './rng';

/** Refusals the site's protection answers with (each classified `hard_block`). */
export const HARD_KINDS = [
  'cloudflare-block',
  'cloudflare-banned-ip',
  'cloudflare-country',
  'akamai-denied',
  'rate-limited',
  'datadome-429',
  'bare-403',
  'connection-reset',
] as const;
/** Challenge pages (each classified `challenge`). */
export const CHALLENGE_KINDS = [
  'cloudflare-challenge',
  'perimeterx-captcha',
  'datadome-captcha',
  'security-check-200',
] as const;
/** Refusals disguised as success (each classified `soft_block`). */
export const SOFT_KINDS = ['small-page', 'empty-records', 'unusual-traffic', 'perimeterx-denied-200'] as const;
/** Failures that are nobody's hostility (each classified `error`). */
export const ERROR_KINDS = ['not-found', 'server-error', 'timeout', 'proxy-error'] as const;

export type HardKind = (typeof HARD_KINDS)[number];
export type ChallengeKind = (typeof CHALLENGE_KINDS)[number];
export type SoftKind = (typeof SOFT_KINDS)[number];
export type ErrorKind = (typeof ERROR_KINDS)[number];

export interface PageContext {
  host: string;
  pageType: PageType;
  path: string;
  country: string;
  ts: number;
}

/** A response as the crawler reports it; `edge`: answered by the protection layer, not the origin (fast). */
export interface Response {
  status?: number;
  networkError?: NetworkError;
  headers?: Record<string, string>;
  bodySample?: string;
  title?: string;
  bytes?: number;
  edge: boolean;
}

const ip = (rng: Rng): string => `203.0.113.${rng.int(2, 254)}`;
const iso = (ts: number): string => new Date(ts).toISOString().replace(/\.\d{3}Z$/, 'Z');

const CF_HEAD =
  '<!DOCTYPE html><html lang="en-US"><head><meta charset="UTF-8"><meta name="robots" content="noindex, ' +
  'nofollow"><meta name="viewport" content="width=device-width,initial-scale=1">';

function cloudflareBlock(rng: Rng, c: PageContext, code: 1006 | 1009 | 1020): Response {
  const ray = rng.hex(16);
  const why =
    code === 1009
      ? `The owner of this website (${c.host}) has banned the country or region your IP address is in ` +
        `(${c.country}) from accessing this website.`
      : code === 1006
        ? `The owner of this website (${c.host}) has banned your IP address (${ip(rng)}).`
        : 'This website is using a security service to protect itself from online attacks. The action you just ' +
          'performed triggered the security solution.';
  const title =
    code === 1020 ? 'Attention Required! | Cloudflare' : `Access denied | ${c.host} used Cloudflare to restrict access`;
  const body =
    `${CF_HEAD}<title>${title}</title><link rel="stylesheet" id="cf_styles-css" ` +
    `href="/cdn-cgi/styles/cf.errors.css"></head>` +
    (`<body><div id="cf-wrapper"><div id="cf-error-details" class="cf-error-details-wrapper"><div ` +
      `class="cf-wrapper cf-header cf-error-overview">`) +
    (code === 1020
      ? `<h1 data-translate="block_headline">Sorry, you have been blocked</h1><h2 class="cf-subheadline">You are ` +
        `unable to access ${c.host}</h2>`
      : `<h1><span class="cf-error-type">Error</span> <span class="cf-error-code">${code}</span></h1><h2 ` +
        `class="cf-subheadline">Access denied</h2>`) +
    `</div><div class="cf-section cf-wrapper"><h2>What happened?</h2><p>${why}</p></div>` +
    (`<div class="cf-error-footer cf-wrapper"><p><span class="cf-footer-item">Cloudflare Ray ID: ` +
      `<strong>${ray}</strong></span>`) +
    (`<span class="cf-footer-item">Performance &amp; security by <a ` +
      `href="https://www.cloudflare.com/5xx-error-landing">Cloudflare</a></span></p></div></div></div></body></ht` +
      `ml>`);
  return {
    status: 403,
    headers: { server: 'cloudflare', 'cf-ray': `${ray}-FRA`, 'content-type': 'text/html; charset=UTF-8' },
    bodySample: body,
    bytes: rng.int(4_800, 7_400),
    edge: true,
  };
}

function akamaiDenied(rng: Rng, c: PageContext): Response {
  const ref = `18&#46;${rng.hex(8)}&#46;${Math.floor(c.ts / 1000)}&#46;${rng.hex(7)}`;
  const url = `https&#58;&#47;&#47;${c.host.replace(/\./g, '&#46;')}${c.path.replace(/\//g, '&#47;')}`;
  const body =
    `<HTML><HEAD>\n<TITLE>Access Denied</TITLE>\n</HEAD><BODY>\n<H1>Access Denied</H1>\n \nYou don't have ` +
    `permission to access "${url}" on this server.<P>\n` +
    `Reference&#32;&#35;${ref}\n<P>https&#58;&#47;&#47;errors&#46;edgesuite&#46;net&#47;${ref}</P>\n</BODY>\n</HTML>\n`;
  return {
    status: 403,
    headers: { server: 'AkamaiGHost', 'content-type': 'text/html' },
    bodySample: body,
    bytes: body.length,
    edge: true,
  };
}

function rateLimited(rng: Rng): Response {
  const body =
    '<html>\r\n<head><title>429 Too Many Requests</title></head>\r\n<body>\r\n<center><h1>429 Too Many ' +
    'Requests</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
  return {
    status: 429,
    headers: { server: 'nginx', 'retry-after': String(rng.int(30, 600)), 'content-type': 'text/html' },
    bodySample: body,
    bytes: body.length,
    edge: true,
  };
}

function datadome429(rng: Rng): Response {
  // DataDome's hard refusal: an empty 429 whose only evidence is its header (a captcha would be a challenge).
  return {
    status: 429,
    headers: { server: 'nginx', 'x-datadome': 'protected', 'x-datadome-cid': rng.hex(32), 'content-length': '0' },
    bytes: 0,
    edge: true,
  };
}

function cloudflareChallenge(rng: Rng, c: PageContext): Response {
  const ray = rng.hex(16);
  const body =
    `${CF_HEAD}<title>Just a moment...</title><meta http-equiv="refresh" content="390"></head><body ` +
    `class="no-js"><div class="main-wrapper" role="main"><div class="main-content">` +
    (`<h1 class="zone-name-title h1">${c.host}</h1><p class="h2 spacer-bottom">Verifying you are human. This ` +
      `may take a few seconds.</p>`) +
    (`<noscript><div class="h2"><span id="challenge-error-text">Enable JavaScript and cookies to ` +
      `continue</span></div></noscript></div></div>`) +
    (`<script>(function(){window._cf_chl_opt={cvId: '3',cZone: "${c.host}",cType: 'managed',cRay: '${ray}',cH: ` +
      `'${rng.hex(40)}',cFPWv: 'b',cITimeS: '${Math.floor(c.ts / 1000)}'};`) +
    (`var cpo = document.createElement('script');cpo.src = '/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page` +
      `/v1?ray=${ray}';document.getElementsByTagName('head')[0].appendChild(cpo);}());</script></body></html>`);
  return {
    status: 403,
    headers: {
      server: 'cloudflare',
      'cf-mitigated': 'challenge',
      'cf-ray': `${ray}-AMS`,
      'content-type': 'text/html; charset=UTF-8',
    },
    bodySample: body,
    bytes: rng.int(5_200, 7_800),
    edge: true,
  };
}

function perimeterxCaptcha(rng: Rng): Response {
  const app = `PX${rng.hex(8)}`;
  const uuid = `${rng.hex(8)}-${rng.hex(4)}-11ef-${rng.hex(4)}-${rng.hex(12)}`;
  const body =
    '<!DOCTYPE html><html lang="en"><head><meta name="viewport" content="width=device-width, ' +
    'initial-scale=1"><meta name="description" content="px-captcha">' +
    ('<title>Access to this page has been denied</title></head><body><section class="px-container"><div ' +
      'class="page-title-wrapper"><div class="page-title">') +
    ('<h1 class="px-captcha-error-header">Before we continue...</h1></div></div><div ' +
      'class="content-wrapper"><div class="content"><div class="px-captcha-container">') +
    (`<div class="px-captcha-message">Press &amp; Hold to confirm you are<br>a human (and not a bot).</div><div ` +
      `id="px-captcha"></div></div>`) +
    `<p class="px-captcha-refid">Reference ID ${uuid}</p></div></div></section>` +
    (`<script>window._pxAppId = '${app}';window._pxUuid = '${uuid}';</script><script ` +
      `src="https://captcha.px-cdn.net/${app}/captcha.js?a=c&m=0" async></script></body></html>`);
  return {
    status: 403,
    headers: { server: 'nginx', 'set-cookie': `_pxhd=${rng.hex(24)}; path=/`, 'content-type': 'text/html' },
    bodySample: body,
    bytes: rng.int(9_000, 14_000),
    edge: true,
  };
}

function datadomeCaptcha(rng: Rng, c: PageContext): Response {
  const body =
    `<html lang="en"><head><title>${c.host}</title><style>#cmsg{animation: A 1.5s;}@keyframes ` +
    `A{0%{opacity:0;}99%{opacity:0;}100%{opacity:1;}}</style></head>` +
    (`<body style="margin:0"><p id="cmsg">Please enable JS and disable any ad blocker</p><script ` +
      `data-cfasync="false">var dd={'rt':'c','cid':'${rng.hex(24)}',`) +
    (`'hsh':'${rng.hex(30).toUpperCase()}','t':'fe','s':${rng.int(10_000, 60_000)},'host':'geo.captcha-delivery.` +
      `com'}</script>`) +
    '<script data-cfasync="false" src="https://ct.captcha-delivery.com/c.js"></script></body></html>';
  return {
    status: 403,
    headers: { server: 'nginx', 'x-datadome': 'protected', 'content-type': 'text/html;charset=utf-8' },
    bodySample: body,
    bytes: body.length,
    edge: true,
  };
}

function securityCheck200(rng: Rng, c: PageContext): Response {
  const body =
    `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Security check</title><script ` +
    `src="https://www.google.com/recaptcha/api.js" async defer></script></head>` +
    (`<body><main class="challenge"><h1>One more step</h1><p>Please complete the security check to access ` +
      `${c.host}.</p>`) +
    (`<form action="/verify" method="post"><div class="g-recaptcha" ` +
      `data-sitekey="6Lc${rng.hex(20)}"></div><input type="hidden" name="return" value="${c.path}">`) +
    '<button type="submit">Continue</button></form></main></body></html>';
  return {
    status: 200,
    headers: { server: 'nginx', 'content-type': 'text/html' },
    bodySample: body,
    bytes: body.length,
    edge: true,
  };
}

function smallPage(rng: Rng): Response {
  // An application shell without its data: what a site serves a client it no longer wants to feed.
  const body =
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Example Shop</title><link ' +
    'rel="stylesheet" href="/static/css/app.css"></head>' +
    (`<body><div id="app" data-build="${rng.hex(7)}"></div><noscript>Please enable ` +
      `JavaScript.</noscript><script src="/static/js/runtime.js"></script></body></html>`);
  return {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    bodySample: body,
    bytes: rng.int(body.length, 3_500),
    edge: false,
  };
}

function unusualTraffic(rng: Rng, c: PageContext): Response {
  const body =
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="robots" ' +
    'content="noindex"><title>Sorry...</title></head><body><div class="wrap">' +
    ("<h1>We're sorry...</h1><p>Our systems have detected unusual traffic from your computer network. This page " +
      "checks to see if it's really you sending the requests, and not an automated program.</p>") +
    (`<p class="small">IP address: ${ip(rng)}<br>Time: ${iso(c.ts)}<br>URL: ` +
      `https://${c.host}${c.path.replace(/&/g, '&amp;')}</p></div></body></html>`);
  return {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    bodySample: body,
    bytes: body.length + rng.int(0, 400),
    edge: false,
  };
}

function perimeterxDenied200(rng: Rng): Response {
  const body =
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Access to this page has been ' +
    'denied</title></head><body><div class="container">' +
    ('<h1>Access to this page has been denied.</h1><p>Access to this page has been denied because we believe ' +
      'you are using automation tools to browse the website.</p>') +
    (`<p>This may happen as a result of the following:</p><ul><li>Javascript is disabled or blocked by an ` +
      `extension (ad blockers for example)</li><li>Your browser does not support cookies</li></ul>`) +
    `<p>Reference ID: #${rng.hex(8)}-${rng.hex(4)}-11ef-${rng.hex(4)}-${rng.hex(12)}</p></div></body></html>`;
  return {
    status: 200,
    headers: { server: 'nginx', 'content-type': 'text/html' },
    bodySample: body,
    bytes: rng.int(3_000, 4_800),
    edge: true,
  };
}

function notFound(rng: Rng, c: PageContext): Response {
  const body =
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Page not found | Example ` +
    `Shop</title></head><body><h1>We can't find that page</h1><p>${c.path} may have moved or no longer ` +
    `exists.</p><a href="/">Back to the shop</a></body></html>`;
  return {
    status: 404,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    bodySample: body,
    bytes: rng.int(18_000, 26_000),
    edge: false,
  };
}

function serverError(rng: Rng): Response {
  const status = rng.pick([500, 502, 503, 503, 504] as const);
  const text =
    status === 500
      ? '500 Internal Server Error'
      : status === 502
        ? '502 Bad Gateway'
        : status === 503
          ? '503 Service Temporarily Unavailable'
          : '504 Gateway Time-out';
  const body =
    `<html>\r\n<head><title>${text}</title></head>\r\n<body>\r\n<center><h1>${text}</h1></center>\r\n<hr><center>` +
    `nginx</center>\r\n</body>\r\n</html>\r\n`;
  return {
    status,
    headers: { server: 'nginx', 'content-type': 'text/html' },
    bodySample: body,
    bytes: body.length,
    edge: false,
  };
}

/** A refusal or failure page of the given kind. `empty-records` and `ok` pages are built in traffic.ts. */
export function renderPage(
  kind: Exclude<HardKind | ChallengeKind | SoftKind | ErrorKind, 'empty-records'>,
  rng: Rng,
  c: PageContext,
): Response {
  switch (kind) {
    case 'cloudflare-block':
      return cloudflareBlock(rng, c, 1020);
    case 'cloudflare-banned-ip':
      return cloudflareBlock(rng, c, 1006);
    case 'cloudflare-country':
      return cloudflareBlock(rng, c, 1009);
    case 'akamai-denied':
      return akamaiDenied(rng, c);
    case 'rate-limited':
      return rateLimited(rng);
    case 'datadome-429':
      return datadome429(rng);
    case 'bare-403':
      return { status: 403, headers: { server: 'nginx', 'content-length': '0' }, bytes: 0, edge: true };
    case 'connection-reset':
      return { networkError: 'connection_reset', edge: true };
    case 'cloudflare-challenge':
      return cloudflareChallenge(rng, c);
    case 'perimeterx-captcha':
      return perimeterxCaptcha(rng);
    case 'datadome-captcha':
      return datadomeCaptcha(rng, c);
    case 'security-check-200':
      return securityCheck200(rng, c);
    case 'small-page':
      return smallPage(rng);
    case 'unusual-traffic':
      return unusualTraffic(rng, c);
    case 'perimeterx-denied-200':
      return perimeterxDenied200(rng);
    case 'not-found':
      return notFound(rng, c);
    case 'server-error':
      return serverError(rng);
    case 'timeout':
      return { networkError: 'timeout', edge: false };
    case 'proxy-error':
      return { networkError: 'proxy', edge: true };
  }
}

/** The protection in front of a site: which normal-page scripts it injects and what its `server` header says. */
export type Protection = 'cloudflare' | 'akamai' | 'datadome' | 'perimeterx' | 'none';

const PROTECTION_SCRIPT: Readonly<Record<Protection, string>> = {
  cloudflare:
    "<script>(function(){var a=document.createElement('script');a.src='/cdn-cgi/challenge-platform/scripts/jsd/" +
    "main.js';document.getElementsByTagName('head')[0].appendChild(a);})();</script>",
  akamai: '<script type="text/javascript" src="/akam/13/7a1b2c3d" defer></script>',
  datadome:
    '<script>window.ddjskey = "A1B2C3D4E5F6"; window.ddoptions = {};</script><script ' +
    'src="https://js.datadome.co/tags.js" async></script>',
  perimeterx: '<script>window._pxAppId = \'PXa1b2c3d4\';</script><script src="/a1b2c3d4/init.js" async></script>',
  none: '',
};
const SERVER: Readonly<Record<Protection, string>> = {
  cloudflare: 'cloudflare',
  akamai: 'AkamaiGHost',
  datadome: 'nginx',
  perimeterx: 'nginx',
  none: 'nginx',
};

const PRODUCTS = [
  'Trailrunner GTX 4',
  'Summit 45 Backpack',
  'Alpine Down Jacket',
  'Ridge Trekking Poles',
  'Basecamp 2P Tent',
  'Storm Shell Pants',
];
const CATEGORIES = ['Running shoes', 'Backpacks', 'Jackets', 'Tents', 'Climbing', 'Sale'];
const TERMS = ['tent', 'gore-tex', 'headlamp', 'sleeping bag', 'merino', 'crampons'];

/** The URL path of a request (used inside block pages, as real ones quote it). */
export function pathOf(rng: Rng, pageType: PageType): string {
  if (pageType === 'product') return `/p/${rng.pick(PRODUCTS).toLowerCase().replace(/ /g, '-')}-${rng.int(1, 9999)}`;
  if (pageType === 'listing')
    return `/c/${rng.pick(CATEGORIES).toLowerCase().replace(/ /g, '-')}?page=${rng.int(1, 40)}`;
  return `/search?q=${encodeURIComponent(rng.pick(TERMS))}&page=${rng.int(1, 5)}`;
}

/** Title and head of a normal page, as a crawler sampling its bodies sends them. */
export function normalPageHead(
  rng: Rng,
  protection: Protection,
  c: PageContext,
): { title: string; bodySample: string; headers: Record<string, string> } {
  const title =
    c.pageType === 'product'
      ? `${rng.pick(PRODUCTS)} | Example Outdoor Shop`
      : c.pageType === 'listing'
        ? `${rng.pick(CATEGORIES)} – page ${rng.int(1, 40)} | Example Outdoor Shop`
        : `Search results for “${rng.pick(TERMS)}” | Example Outdoor Shop`;
  const recaptcha =
    c.pageType === 'product'
      ? '<script src="https://www.google.com/recaptcha/api.js?render=6LcXexampleSiteKeyAAAAAB" async defer></script>'
      : '';
  const bodySample =
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" ` +
    `content="width=device-width, initial-scale=1"><title>${title.replace(/&/g, '&amp;')}</title>` +
    (`<link rel="canonical" href="https://${c.host}${c.path.replace(/&/g, '&amp;')}"><link rel="stylesheet" ` +
      `href="/static/css/app.${rng.hex(6)}.css">${recaptcha}${PROTECTION_SCRIPT[protection]}</head>`) +
    (`<body class="${c.pageType}"><header class="site-header"><a class="logo" href="/">Example ` +
      `Outdoor</a><nav><a href="/c/men">Men</a> <a href="/c/women">Women</a> <a href="/sale">Sale</a></nav>`) +
    ('<form class="search" action="/search"><input name="q" placeholder="Search products"></form><a ' +
      'class="cart" href="/cart">Cart (0)</a></header><main>');
  return { title, bodySample, headers: { server: SERVER[protection], 'content-type': 'text/html; charset=utf-8' } };
}
