/**
 * `node dist/dev/hostile-site/main.js` as the demo and the Python tests spawn it (`npm test` builds dist/
 * first): one JSON line of addresses on stdout, a working world behind them, a clean exit on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, run, cleanEnv } from '../../kit/processes';
import { admin, json, viaProxy } from './helpers';
import type { WorldAddresses } from '../../../dev/hostile-site/main';

const MAIN = join(ROOT, 'dist', 'dev', 'hostile-site', 'main.js');

it('prints the addresses as JSON, serves through its proxies, and exits 0 on SIGTERM', async () => {
  const child = spawn(process.execPath, [MAIN, '--routes', 'dc-de,resi-fr', '--seed', '3'], {
    cwd: ROOT,
    env: cleanEnv({}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const end = out.indexOf('\n');
        if (end !== -1) resolve(out.slice(0, end));
      });
      child.on('close', (code) => reject(new Error(`exited ${code} before printing its addresses`)));
    });
    const addresses = JSON.parse(line) as WorldAddresses;
    expect(Object.keys(addresses.proxies)).toEqual(['dc-de', 'resi-fr']);
    expect(addresses.hosts['shop.hostile.test']).toBe('http://shop.hostile.test/');
    expect(addresses.admin).toBe(`${addresses.site}/_admin/`);
    const page = await viaProxy(addresses.proxies['resi-fr']!, 'http://shop.hostile.test/item/1');
    expect(page.status).toBe(200);
    const summary = json<{ byRoute: Record<string, number> }>(
      await admin(Number(new URL(addresses.site).port), 'GET', '/_admin/summary?host=shop.hostile.test'),
    );
    expect(summary.byRoute).toEqual({ 'resi-fr': 1 });
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited).toBe(0);
});

it('refuses a bad option with a one-line error and exit code 2', async () => {
  const result = await run(MAIN, ['--routes', 'dc de'], cleanEnv({}));
  expect(result.code).toBe(2);
  expect(result.stderr).toMatch(/--routes <labels>.*"dc de" is not a route label/);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.stdout).toBe('');
});
