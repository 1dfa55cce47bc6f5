/** Temporal keeps membership ports in a smallint: the cluster stack's free ports stay below 32768. */
import { freeLowPort, isPortInUse } from '../../../stack/free-port';

test('a free port between 20000 and 32000, never one already handed out', async () => {
  const taken = new Set<number>();
  for (let i = 0; i < 20; i++) {
    const port = await freeLowPort(taken);
    expect(port).toBeGreaterThanOrEqual(20_000);
    expect(port).toBeLessThan(32_000);
    expect(taken.has(port)).toBe(false);
    expect(await isPortInUse(port)).toBe(false);
    taken.add(port);
  }
});

test('says so when there is none', async () => {
  const all = new Set(Array.from({ length: 12_000 }, (_, i) => 20_000 + i));
  await expect(freeLowPort(all)).rejects.toThrow('no free port found between 20000 and 32000');
});
