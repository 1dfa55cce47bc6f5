/**
 * The console over HTTP for integration tests, as a browser uses it: sign in with a token (a session
 * cookie), GET pages with the cookie, POST forms with the cookie, the console's own Origin and the
 * session's CSRF token (each part can be left out or replaced, to test the refusals).
 */
import type { TestApi } from './api';

export const FORM = 'application/x-www-form-urlencoded';
export const form = (fields: Record<string, string>): string => new URLSearchParams(fields).toString();
/** The CSRF token a signed-in page's forms carry. */
export const csrfOf = (body: string): string => /name="csrf" value="([^"]+)"/.exec(body)![1]!;

export interface ConsoleSession {
  /** The session id (the cookie's value). */
  id: string;
  csrf: string;
  get(path: string): Promise<Response>;
  /** A form POST: with the session's CSRF token and the API's origin unless `fields`/`headers` say otherwise. */
  post(path: string, fields: Record<string, string>, headers?: Record<string, string>): Promise<Response>;
}

export async function signInConsole(api: TestApi, token: string): Promise<ConsoleSession> {
  const r = await fetch(`${api.url}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': FORM, origin: api.url },
    body: form({ token }),
  });
  if (r.status !== 303) throw new Error(`sign-in answered ${r.status}`);
  const id = /^th_session=([^;]+);/.exec(r.headers.get('set-cookie') ?? '')![1]!;
  const get = (path: string): Promise<Response> =>
    fetch(`${api.url}${path}`, { redirect: 'manual', headers: { cookie: `th_session=${id}` } });
  const csrf = csrfOf(await (await get('/console/fleet')).text());
  return {
    id,
    csrf,
    get,
    post: (path, fields, headers = { origin: api.url }) =>
      fetch(`${api.url}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': FORM, cookie: `th_session=${id}`, ...headers },
        body: form({ csrf, ...fields }),
      }),
  };
}
