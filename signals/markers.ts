/**
 * The built-in catalogue of challenge and block-page markers. Order matters: the classifier takes the
 * first marker that counts, so vendor-specific markers come before generic wording, and within a vendor
 * the strong tokens come first (the reason then names the most specific evidence).
 *
 * False positives are the main risk, so each marker records why it is safe:
 * - Many vendors put scripts on *normal* pages too (Cloudflare's /cdn-cgi/challenge-platform/scripts/jsd,
 *   DataDome's tags.js, PerimeterX's _pxAppId sensor, Incapsula's SWJIYLWA script, reCAPTCHA v3 on
 *   product pages). Those tokens are `weak`; only tokens that exist solely on challenge/block pages are
 *   `strong`.
 * - Generic words ("blocked", "access denied") are never strong in the body: they need the title, or a
 *   short page / non-2xx status (`weak`).
 * - Header markers that every response of a protected site carries (x-datadome, x-iinfo, _px cookies,
 *   server: cloudflare) are limited to 403/429 and only attribute a refusal to a vendor.
 */
import { type MarkerSpecInput } from './marker-spec';

export const BUILT_IN_MARKERS: readonly MarkerSpecInput[] = [
  // ---------------------------------------------------------------- challenges: Cloudflare
  {
    id: 'cloudflare-mitigated-header',
    vendor: 'Cloudflare',
    kind: 'challenge',
    headers: [{ name: 'cf-mitigated', contains: 'challenge' }],
    note: 'Cloudflare sets cf-mitigated: challenge on every challenge response',
  },
  {
    id: 'cloudflare-chl-opt',
    vendor: 'Cloudflare',
    kind: 'challenge',
    bodyAny: ['cf_chl_opt', 'cf-browser-verification', 'cf-challenge-running', 'cf_chl_prog'],
    note: 'window._cf_chl_opt drives the managed/JS challenge; old IUAM pages had cf-browser-verification',
  },
  {
    id: 'cloudflare-challenge-platform',
    vendor: 'Cloudflare',
    kind: 'challenge',
    // Only the orchestrate path: /cdn-cgi/challenge-platform/scripts/jsd/main.js is on normal pages.
    bodyRegex: '/cdn-cgi/challenge-platform/(?:h/[a-z]/)?orchestrate/',
  },
  {
    id: 'cloudflare-just-a-moment',
    vendor: 'Cloudflare',
    kind: 'challenge',
    evidence: 'weak',
    titleRegex: '^just a moment',
  },
  {
    id: 'cloudflare-challenge-text',
    vendor: 'Cloudflare',
    kind: 'challenge',
    evidence: 'weak',
    bodyAny: [
      'checking your browser before accessing',
      'checking if the site connection is secure',
      'needs to review the security of your connection before proceeding',
      'enable javascript and cookies to continue',
    ],
  },
  // ---------------------------------------------------------------- challenges: CAPTCHA widgets
  {
    id: 'turnstile-widget',
    vendor: 'Cloudflare Turnstile',
    kind: 'challenge',
    evidence: 'weak',
    bodyAny: ['challenges.cloudflare.com/turnstile', 'cf-turnstile'],
    note: 'weak: Turnstile also guards login and contact forms on normal pages',
  },
  {
    id: 'hcaptcha-widget',
    vendor: 'hCaptcha',
    kind: 'challenge',
    evidence: 'weak',
    bodyAny: ['hcaptcha.com/1/api.js', 'h-captcha'],
    note: 'weak: hCaptcha also guards sign-up forms',
  },
  {
    id: 'recaptcha-widget',
    vendor: 'reCAPTCHA',
    kind: 'challenge',
    evidence: 'weak',
    bodyAny: [
      'google.com/recaptcha/api.js',
      'google.com/recaptcha/enterprise.js',
      'recaptcha.net/recaptcha/api.js',
      'g-recaptcha',
    ],
    note: 'weak: reCAPTCHA v3 runs invisibly on many normal pages',
  },
  // ---------------------------------------------------------------- challenges: bot-management vendors
  {
    id: 'perimeterx-captcha',
    vendor: 'PerimeterX (HUMAN)',
    kind: 'challenge',
    bodyAny: ['px-captcha', 'captcha.px-cdn.net', 'captcha.px-cloud.net'],
  },
  {
    id: 'perimeterx-press-and-hold',
    vendor: 'PerimeterX (HUMAN)',
    kind: 'challenge',
    evidence: 'weak',
    bodyAny: ['press &amp; hold', 'press & hold'],
  },
  {
    id: 'perimeterx-app-id',
    vendor: 'PerimeterX (HUMAN)',
    kind: 'challenge',
    evidence: 'weak',
    bodyAny: ['_pxappid'],
    note: 'weak: the PerimeterX sensor snippet sets _pxAppId on normal pages too',
  },
  {
    id: 'datadome-captcha',
    vendor: 'DataDome',
    kind: 'challenge',
    bodyAny: ['captcha-delivery.com'],
    note: 'geo./ct.captcha-delivery.com only serve the DataDome captcha/interstitial',
  },
  {
    id: 'datadome-weak',
    vendor: 'DataDome',
    kind: 'challenge',
    evidence: 'weak',
    bodyAny: ['datadome'],
    note: 'weak: js.datadome.co/tags.js is on normal pages of protected sites',
  },
  {
    id: 'incapsula-captcha-iframe',
    vendor: 'Imperva Incapsula',
    kind: 'challenge',
    bodyAny: ['_incapsula_resource?cwudnsai='],
    note: 'the incident iframe that serves the Incapsula CAPTCHA',
  },
  {
    id: 'incapsula-resource',
    vendor: 'Imperva Incapsula',
    kind: 'challenge',
    evidence: 'weak',
    bodyAny: ['_incapsula_resource'],
    note: 'weak: /_Incapsula_Resource?SWJIYLWA= is injected into normal pages',
  },
  {
    id: 'akamai-bot-manager-challenge',
    vendor: 'Akamai',
    kind: 'challenge',
    bodyAny: ['/_sec/cp_challenge/', 'sec-if-cpt-container', 'bm-verify'],
  },
  {
    id: 'aws-waf-action-header',
    vendor: 'AWS WAF',
    kind: 'challenge',
    headers: [{ name: 'x-amzn-waf-action' }],
    note: 'AWS WAF sets x-amzn-waf-action: challenge|captcha on its interstitials',
  },
  {
    id: 'aws-waf-challenge',
    vendor: 'AWS WAF',
    kind: 'challenge',
    bodyAny: ['gokuprops'],
  },
  {
    id: 'aws-waf-weak',
    vendor: 'AWS WAF',
    kind: 'challenge',
    evidence: 'weak',
    bodyAny: ['awswaf', 'aws-waf-token'],
    note: 'weak: the AWS WAF token SDK is embedded in normal pages of some apps',
  },
  {
    id: 'kasada-challenge',
    vendor: 'Kasada',
    kind: 'challenge',
    evidence: 'weak',
    bodyAny: ['kpsdk.scriptstart', 'kpsdk.start'],
    note: 'weak: the Kasada SDK also runs on normal pages; its 429 interstitial is tiny',
  },
  {
    id: 'sucuri-js-challenge',
    vendor: 'Sucuri',
    kind: 'challenge',
    bodyAny: ['sucuri_cloudproxy_js'],
  },
  {
    id: 'distil-captcha',
    vendor: 'Imperva (Distil)',
    kind: 'challenge',
    bodyAny: ['distil_r_captcha'],
  },
  {
    id: 'amazon-robot-check',
    vendor: 'Amazon',
    kind: 'challenge',
    bodyAny: ['/errors/validatecaptcha'],
  },
  // ---------------------------------------------------------------- challenges: generic
  {
    id: 'redirect-to-captcha',
    vendor: 'generic',
    kind: 'challenge',
    statuses: [301, 302, 303, 307, 308],
    headers: [{ name: 'location', regex: 'captcha|/sorry/|/challenge' }],
  },
  {
    id: 'generic-challenge-title',
    vendor: 'generic',
    kind: 'challenge',
    titleRegex:
      '^(?:are you a (?:robot|human)|robot check|bot check|security check|human verification|verify you are (?:a )?human|captcha|pardon our interruption|one more step)\\b',
  },
  {
    id: 'generic-challenge-text',
    vendor: 'generic',
    kind: 'challenge',
    evidence: 'weak',
    bodyAny: [
      'are you a robot',
      'are you a human',
      'verify you are human',
      'verify you are a human',
      'prove you are human',
      "i'm not a robot",
      'complete the security check',
      'human verification',
    ],
  },
  // ---------------------------------------------------------------- blocks: vendors
  {
    id: 'cloudflare-attention-required',
    vendor: 'Cloudflare',
    kind: 'block',
    bodyAny: ['attention required! | cloudflare'],
  },
  {
    id: 'cloudflare-sorry-blocked',
    vendor: 'Cloudflare',
    kind: 'block',
    bodyAll: ['sorry, you have been blocked', 'cloudflare'],
  },
  {
    id: 'cloudflare-error-code',
    vendor: 'Cloudflare',
    kind: 'block',
    evidence: 'weak',
    // 1006-1009 banned IP/country, 1010 browser signature, 1012 access denied, 1015 rate limited, 1020 firewall.
    bodyRegex: 'error code:? ?10(?:0[6-9]|1[0-25]|20)\\b',
  },
  {
    id: 'perimeterx-denied-title',
    vendor: 'PerimeterX (HUMAN)',
    kind: 'block',
    titleRegex: '^access to this page has been denied',
  },
  {
    id: 'incapsula-incident',
    vendor: 'Imperva Incapsula',
    kind: 'block',
    bodyAny: ['incapsula incident id'],
  },
  {
    id: 'akamai-reference',
    vendor: 'Akamai',
    kind: 'block',
    // Akamai HTML-encodes the reference: "Reference&#32;&#35;18&#46;2d351ab8&#46;1557333295&#46;a4e16ab".
    bodyRegex: 'reference(?:\\s|&#32;)+(?:#|&#35;)\\s*\\d+(?:\\.|&#46;)[0-9a-f]+',
    bodyAny: ['access denied', "you don't have permission to access", 'you don&#39;t have permission to access'],
  },
  {
    id: 'akamai-edgesuite-error',
    vendor: 'Akamai',
    kind: 'block',
    bodyAny: ['errors.edgesuite.net', 'errors&#46;edgesuite&#46;net'],
  },
  {
    id: 'f5-asm-rejected',
    vendor: 'F5 BIG-IP ASM',
    kind: 'block',
    bodyAll: ['the requested url was rejected', 'support id'],
  },
  {
    id: 'sucuri-block',
    vendor: 'Sucuri',
    kind: 'block',
    bodyAny: ['sucuri website firewall - access denied', 'access denied - sucuri website firewall'],
  },
  {
    id: 'distil-blocked',
    vendor: 'Imperva (Distil)',
    kind: 'block',
    bodyAny: ['distil_r_blocked'],
  },
  // ---------------------------------------------------------------- blocks: vendor attribution by header
  {
    id: 'datadome-refusal-header',
    vendor: 'DataDome',
    kind: 'block',
    statuses: [403, 429],
    headers: [{ name: 'x-datadome' }],
  },
  {
    id: 'perimeterx-refusal-cookie',
    vendor: 'PerimeterX (HUMAN)',
    kind: 'block',
    statuses: [403, 429],
    headers: [{ name: 'set-cookie', regex: '(?:^|[\\s,;])_px(?:3|hd|vid|de|2)?=' }],
  },
  {
    id: 'incapsula-refusal-header',
    vendor: 'Imperva Incapsula',
    kind: 'block',
    statuses: [403, 429],
    headers: [{ name: 'x-iinfo' }],
  },
  {
    id: 'akamai-refusal-header',
    vendor: 'Akamai',
    kind: 'block',
    statuses: [403, 429],
    headers: [{ name: 'server', contains: 'akamaighost' }],
  },
  {
    id: 'cloudflare-refusal-header',
    vendor: 'Cloudflare',
    kind: 'block',
    statuses: [403, 429],
    headers: [{ name: 'server', regex: '^cloudflare' }],
  },
  // ---------------------------------------------------------------- blocks: generic
  {
    id: 'generic-block-title',
    vendor: 'generic',
    kind: 'block',
    // Anchored: "Access Denied" or "Blocked | Shop" as the whole title, not "How the council blocked …".
    titleRegex:
      '^(?:access denied|access blocked|blocked|you have been blocked|forbidden|403 forbidden|request rejected|request blocked|ip blocked|too many requests|rate limited)(?:$|\\s*[|:.!–—-])',
  },
  {
    id: 'generic-block-text',
    vendor: 'generic',
    kind: 'block',
    evidence: 'weak',
    bodyAny: [
      'unusual traffic from your computer network',
      'our systems have detected unusual traffic',
      'you have been blocked',
      'your ip has been blocked',
      'your ip address has been blocked',
      'your access has been blocked',
      'this request has been blocked',
      'automated access to this page',
      'automated queries',
      'too many requests',
      'rate limit exceeded',
      'access denied',
    ],
  },
];

export const BUILT_IN_MARKER_IDS: readonly string[] = BUILT_IN_MARKERS.map((m) => m.id);
