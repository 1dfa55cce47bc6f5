/**
 * What webhooks may reach, and what their errors may say (docs/security.md): notifications go to the
 * configured URL only — a redirect is not followed, and is a permanent error naming only where it
 * pointed — and no delivery error quotes the webhook's secret (its path, its token, a password), even
 * when the receiver echoes the request or the URL was handed to the channel without the config check.
 * Real HTTP on 127.0.0.1; no Temporal, no database.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { initialLoopState } from '../../../core/control/loop-state';
import { buildEvidence } from '../../../core/control/notices';
import { jsonWebhookChannel, slackWebhookChannel } from '../../../server/notifications/channels';
import { type NotificationPayload, PermanentDeliveryError } from '../../../server/notifications/types';

const payload: NotificationPayload = {
  key: 'shop.example.com/c/1/notify-degrading',
  kind: 'degrading',
  severity: 'warning',
  site: 'shop.example.com',
  audience: 'owner',
  recipient: 'crawl-team@example.com',
  title: 'shop.example.com is degrading',
  text: 'hard_block 25.0% (normal 0.5%)',
  link: 'http://127.0.0.1:8233/namespaces/default/workflows/site-health%3Ashop.example.com',
  workflowId: 'site-health:shop.example.com',
  evidence: buildEvidence(initialLoopState('c'), null),
};

interface Receiver {
  url: string;
  paths: string[];
  close(): Promise<void>;
}

async function serve(
  answer: (path: string) => { status: number; headers?: Record<string, string>; body?: string },
): Promise<Receiver> {
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    req.on('data', () => undefined);
    req.on('end', () => {
      paths.push(req.url ?? '');
      const a = answer(req.url ?? '');
      res.writeHead(a.status, a.headers).end(a.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, paths, close: () => new Promise((r) => server.close(() => r())) };
}

async function failure(send: Promise<void>): Promise<Error> {
  try {
    await send;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the delivery to fail');
}

let elsewhere: Receiver;
beforeAll(async () => {
  elsewhere = await serve(() => ({ status: 200, body: 'ok' }));
});
afterAll(() => elsewhere.close());

test.each([301, 302, 307, 308])(
  'a webhook answering %i is not followed: nothing reaches the redirect target; a permanent error names only ' +
    'its origin',
  async (status) => {
    const redirecting = await serve(() => ({
      status,
      headers: { location: `${elsewhere.url}/internal/SECRET-PATH?token=abc` },
    }));
    try {
      const err = await failure(jsonWebhookChannel(`${redirecting.url}/hook/T0K3N`).send(payload));
      expect(err).toBeInstanceOf(PermanentDeliveryError);
      expect(err.message).toBe(
        `JSON webhook at ${redirecting.url} answered ${status}, a redirect to ${elsewhere.url}; redirects are ` +
          `not followed: set the webhook URL to the final address`,
      );
      expect(redirecting.paths).toEqual(['/hook/T0K3N']);
      expect(elsewhere.paths).toEqual([]);
    } finally {
      await redirecting.close();
    }
  },
);

test('a receiver echoing the request URL in its error does not put the token into the error', async () => {
  const echoing = await serve((path) => ({ status: 400, body: `bad request for ${path}` }));
  try {
    const url = `${echoing.url}/services/T0/B0/XOXB-SECRET-PATH`;
    const err = await failure(slackWebhookChannel(url).send(payload));
    expect(err).toBeInstanceOf(PermanentDeliveryError);
    expect(err.message).toMatch(new RegExp(`^Slack webhook at ${echoing.url} answered 400: bad request for `));
    expect(err.message).not.toContain('XOXB-SECRET-PATH');
  } finally {
    await echoing.close();
  }
});

test(
  'a webhook URL with user:password@ handed to the channel directly: the error quotes neither (fetch itself ' +
    'would)',
  async () => {
    const err = await failure(
      jsonWebhookChannel(`${elsewhere.url.replace('//', '//bot:S3CRET-PW@')}/hook/T0K3N-PATH`).send(payload),
    );
    expect(err.message).toMatch(new RegExp(`^JSON webhook at ${elsewhere.url} unreachable: `));
    expect(err.message).not.toContain('S3CRET-PW');
    expect(err.message).not.toContain('T0K3N-PATH');
    expect(elsewhere.paths).toEqual([]);
  },
);
