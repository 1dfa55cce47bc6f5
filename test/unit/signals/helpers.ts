/** Shared test helpers: fixture pages and valid events with overrides. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RequestOutcomeEvent, type RequestOutcomeEventInput } from '@target-health/crawler/events';
import { eventSchema } from '@target-health/crawler/events/event-schema';

const PAGES = join(__dirname, '..', '..', 'fixtures', 'pages');

export function page(name: string): string {
  return readFileSync(join(PAGES, name), 'utf8');
}

export const BASE_EVENT: RequestOutcomeEventInput = {
  ts: '2025-03-14T10:22:31.120Z',
  site: 'shop.example.com',
  route: { country: 'DE', pool: 'residential-eu', session: 'sticky-10m' },
  pageType: 'product',
  status: 200,
  latencyMs: 412,
};

/** A parsed event (so tests exercise the same normalised shape the service sees). */
export function event(overrides: Partial<RequestOutcomeEventInput> = {}): RequestOutcomeEvent {
  return eventSchema().parse({ ...BASE_EVENT, ...overrides });
}

/** An event carrying a fixture page as its body sample, with `bytes` = the page's size unless given. */
export function pageEvent(name: string, overrides: Partial<RequestOutcomeEventInput> = {}): RequestOutcomeEvent {
  const body = page(name);
  return event({ bodySample: body, bytes: Buffer.byteLength(body), ...overrides });
}
