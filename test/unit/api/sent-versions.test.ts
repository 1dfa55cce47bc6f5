/**
 * The controls stream's memory of what its client holds (server/api/sent-versions.ts): a change whose
 * notice arrives after the snapshot already carried its version is not sent again (a race the SSE
 * integration test met on a busy machine), a newer one is, once.
 */
import { SentVersions } from '../../../server/api/sent-versions';

test('a version the snapshot carried is not news; a newer one is, once', () => {
  const v = new SentVersions();
  v.reset([
    { site: 'a.example.com', version: 1 },
    { site: 'b.example.com', version: 7 },
  ]);
  expect(v.take('a.example.com', 1)).toBe(false);
  expect(v.take('a.example.com', 2)).toBe(true);
  expect(v.take('a.example.com', 2)).toBe(false);
  expect(v.take('b.example.com', 6)).toBe(false);
  expect(v.take('c.example.com', 1)).toBe(true);
});

test('a new snapshot replaces what the client holds', () => {
  const v = new SentVersions();
  v.reset([{ site: 'a.example.com', version: 3 }]);
  expect(v.take('a.example.com', 4)).toBe(true);
  // A reconnect's snapshot (the database rebuilt: versions began again) is what the client holds now.
  v.reset([{ site: 'a.example.com', version: 1 }]);
  expect(v.take('a.example.com', 2)).toBe(true);
  v.reset([]);
  expect(v.take('a.example.com', 1)).toBe(true);
});
