/**
 * Servers started side by side get ports below Linux's ephemeral range (32768–60999), which outgoing
 * connections draw their local ports from — and which Temporal's smallint membership ports cannot hold.
 */
import { freeLowPort, freePort, isPortInUse } from '../../../stack/free-port';

test('a free port between 10000 and 31000, never one already handed out', async () => {
  const taken = new Set<number>();
  for (let i = 0; i < 20; i++) {
    const port = await freeLowPort(taken);
    expect(port).toBeGreaterThanOrEqual(10_000);
    expect(port).toBeLessThan(31_000);
    expect(taken.has(port)).toBe(false);
    expect(await isPortInUse(port)).toBe(false);
    taken.add(port);
  }
});

test('freePort stays out of the ephemeral range too: any outgoing connection may take a port there', async () => {
  for (let i = 0; i < 20; i++) expect(await freePort()).toBeLessThan(31_000);
});

test('says so when there is none', async () => {
  const all = new Set(Array.from({ length: 21_000 }, (_, i) => 10_000 + i));
  await expect(freeLowPort(all)).rejects.toThrow('no free port found between 10000 and 31000');
});
