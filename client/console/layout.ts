/**
 * The console's layout, pure: the document around every page, the stylesheet, the Content-Security-Policy,
 * the sign-in page and the signed-in header. Each page is its own module in ./pages/ and takes what it
 * shows and returns a whole document through `page`, every value escaped by `markup` (./html.ts). Plain
 * CSS in one constant stylesheet — the base below plus each page's own rules (PAGE_STYLES), hashed for
 * the CSP — readable from 375 px up; every page works as plain HTML forms and links, with the keyboard,
 * each control labelled.
 */
import { createHash } from 'node:crypto';
import { markup, type SafeHtml, trustedHtml } from './html';
import { PAGE_STYLES } from './pages/styles';

const BASE_STYLE = [
  'body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}',
  'header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;padding:.6rem 1rem;' +
    'background:#1b2a3a;color:#fff}',
  'header h1{font-size:1.05rem;margin:0;flex:1}header form{margin:0}',
  'main{padding:1rem;max-width:100rem;margin:0 auto}',
  'label{display:block;font-weight:600;margin:.2rem 0}',
  'input,select,button{font:inherit;padding:.35rem .5rem;border:1px solid #8a939e;border-radius:4px;background:#fff}',
  'button{cursor:pointer;background:#1f5fa8;color:#fff;border-color:#1f5fa8}',
  ':focus-visible{outline:3px solid #f0a800;outline-offset:2px}',
  '.filters{display:flex;flex-wrap:wrap;gap:.75rem;align-items:end;margin-bottom:1rem}',
  '.filters div{min-width:9rem}.check label{display:inline;font-weight:400}',
  '.frame{overflow-x:auto;background:#fff;border:1px solid #d5d9de;border-radius:4px}',
  'table{border-collapse:collapse;width:100%;min-width:60rem}',
  'th,td{text-align:left;vertical-align:top;padding:.4rem .6rem;border-bottom:1px solid #e3e6ea}',
  'th{background:#eef1f4;font-size:.85rem}td.num{font-variant-numeric:tabular-nums;white-space:nowrap}',
  '.spark{font-family:monospace;letter-spacing:-1px;white-space:nowrap}',
  '.band-resisting{color:#a11}.band-degrading{color:#8a5a00}.band-healthy{color:#1d6b2f}',
  '.why{color:#4a525b;font-size:.9rem}.error{color:#a11;font-weight:600}',
  '.sign-in{max-width:28rem;margin:3rem auto;background:#fff;padding:1.5rem;border:1px solid #d5d9de}',
  '.sign-in input{width:100%;box-sizing:border-box;margin-bottom:1rem}',
  // At a phone's width each site is a card: one line per column, named by its data-label.
  '@media (max-width:48rem){table{min-width:0}thead{display:none}tr,td,tbody th{display:block}' +
    'tbody tr{border-bottom:2px solid #c9ced4;padding:.3rem 0}td,tbody th{border:0;padding:.15rem .6rem}' +
    'td::before{content:attr(data-label) ": ";font-weight:600;font-size:.85rem;color:#4a525b}}',
].join('\n');

const STYLE = [BASE_STYLE, ...PAGE_STYLES].join('\n');

/** The stylesheet's hash, for the Content-Security-Policy that allows exactly it and nothing else. */
export const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `style-src ${STYLE_HASH}`,
  // The console's one static script (./assets.ts) and the stream it opens: no inline script, no other origin.
  "script-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function page(title: string, body: SafeHtml, header?: SafeHtml): string {
  return markup`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Target Health</title><style>${trustedHtml(STYLE)}</style></head>
<body><header><h1>Target Health · ${title}</h1>${header}</header><main>${body}</main></body></html>
`.text;
}

export function signInPage(options: { error?: string; next?: string } = {}): string {
  const error = options.error === undefined ? null : markup`<p class="error" role="alert">${options.error}</p>`;
  return page(
    'Sign in',
    markup`<form class="sign-in" method="post" action="/console/sign-in">
<p>Sign in with an API token (<code>target-health token create &lt;your name&gt; --scope read</code>; scope
<code>decide</code> to act). The browser keeps a session cookie, never the token.</p>${error}
<label for="token">API token</label>
<input id="token" name="token" type="password" autocomplete="off" required autofocus spellcheck="false">
<button type="submit">Sign in</button></form>`,
  );
}

/** The header of a signed-in page: who, and the sign-out form with the session's CSRF token. */
export function signedIn(who: string, csrfToken: string): SafeHtml {
  return markup`<span>Signed in as ${who}</span>
<form method="post" action="/console/sign-out"><input type="hidden" name="csrf" value="${csrfToken}">
<button type="submit">Sign out</button></form>`;
}
