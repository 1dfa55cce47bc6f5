/**
 * The controls map both clients share: the version rule, snapshots replacing the map, the unknown-site fail-safe,
 * listeners, ready().
 */
import { ControlsClientError, ControlsState } from '@target-health/crawler/controls/controls-state';
import type { SiteControls } from '../../../server/compat/controls';

const quiet = () => ({ info: () => undefined, warn: () => undefined, error: () => undefined });
const rec = (site: string, version: number, patch: Partial<SiteControls> = {}): SiteControls => ({
  site,
  concurrencyLimit: 4,
  revisitMultiplier: 1,
  paused: false,
  canaryOnly: false,
  effectiveCostMultiplier: 1,
  band: 'healthy',
  reason: 'r',
  version,
  updatedAt: '2026-11-30T00:00:00.000Z',
  ...patch,
});

test(
  'a record is applied only when newer than the one held; onChange hears each applied one; a throwing listener ' +
    'does not stop the others',
  () => {
    const s = new ControlsState('allow', 1_000, quiet, 'test');
    const heard: number[] = [];
    s.onChange(() => {
      throw new Error('listener bug');
    });
    const off = s.onChange((r) => heard.push(r.version));
    expect(s.apply(rec('a.example.com', 2))).toBe(true);
    expect(s.apply(rec('a.example.com', 2, { paused: true }))).toBe(false);
    expect(s.apply(rec('A.Example.com.', 1))).toBe(false);
    expect(s.apply(rec('A.Example.com.', 3))).toBe(true);
    expect(s.controlsFor('https://a.example.com/x')).toMatchObject({
      site: 'a.example.com',
      version: 3,
      paused: false,
    });
    off();
    s.apply(rec('a.example.com', 4));
    expect(heard).toEqual([2, 3]);
  },
);

test(
  'a snapshot replaces the map: unlisted sites are forgotten, a lower version (a rebuilt database) is taken; ' +
    'listeners hear what differs',
  () => {
    const s = new ControlsState('allow', 1_000, quiet, 'test');
    s.applySnapshot([rec('a.example.com', 5), rec('b.example.com', 2)]);
    const heard: string[] = [];
    s.onChange((r) => heard.push(`${r.site}@${r.version}`));
    s.applySnapshot([rec('a.example.com', 1), rec('c.example.com', 1), rec('b.example.com', 2)]);
    expect(s.controlsFor('a.example.com')?.version).toBe(1);
    expect(s.controlsFor('c.example.com')?.version).toBe(1);
    expect(heard).toEqual(['a.example.com@1', 'c.example.com@1']);
    s.applySnapshot([rec('c.example.com', 1)]);
    expect(s.controlsFor('a.example.com')).toBeUndefined();
    expect(s.status()).toMatchObject({ sites: 1, snapshots: 3 });
  },
);

test(
  "unknownSite: 'allow' answers undefined, 'pause' a synthetic paused record of version 0 (also for a name that " +
    'is not a host)',
  () => {
    expect(new ControlsState('allow', 1_000, quiet, 'test').controlsFor('new.example.com')).toBeUndefined();
    const paused = new ControlsState('pause', 1_000, quiet, 'test');
    expect(paused.controlsFor('NEW.example.com')).toMatchObject({
      site: 'new.example.com',
      paused: true,
      canaryOnly: false,
      version: 0,
    });
    expect(paused.controlsFor('not a host')).toMatchObject({ paused: true, version: 0 });
    paused.apply(rec('new.example.com', 1));
    expect(paused.controlsFor('new.example.com')).toMatchObject({ paused: false, version: 1 });
  },
);

test(
  'ready(): resolves on the first snapshot, rejects at once on a refusal, and after its timeout naming the last ' +
    'problem',
  async () => {
    const s = new ControlsState('allow', 50, quiet, 'the stream at x');
    const first = s.ready();
    s.refused(new ControlsClientError('controls: the API refused the token (401: no)', 'unauthorized'));
    await expect(first).rejects.toThrow('controls: the API refused the token (401: no)');
    await expect(s.ready()).rejects.toThrow('refused the token');
    const t = new ControlsState('allow', 50, quiet, 'the stream at x');
    t.disconnected('cannot reach x (ECONNREFUSED)');
    await expect(t.ready()).rejects.toThrow(
      'controls: no snapshot from the stream at x within 50 ms (last problem: cannot reach x (ECONNREFUSED)); ' +
        'still trying in the background',
    );
    // Accepted again (a snapshot): ready() resolves, now and later.
    s.applySnapshot([]);
    await expect(s.ready()).resolves.toBeUndefined();
    const u = new ControlsState('allow', 5_000, quiet, 'the stream at x');
    const waiting = u.ready();
    u.applySnapshot([]);
    await expect(waiting).resolves.toBeUndefined();
  },
);
