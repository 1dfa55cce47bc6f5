/**
 * No Docker engine runs on our machines, so docker-compose.yml is checked by reading it: every service
 * the production-like stack needs is there, wired to the others by name, and consistent with the
 * product's fixed names and the dev server's versions.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { parse } from 'yaml';
import { EMBEDDED_POSTGRES_SETTINGS } from '../../stack/embedded-postgres';
import { loadApiSettings } from '../../server/api/settings';

interface Service {
  image?: string;
  build?: string;
  environment?: Record<string, string>;
  env_file?: string;
  depends_on?: Record<string, { condition: string }>;
  command?: string[];
  entrypoint?: string[];
  volumes?: string[];
  ports?: string[];
  healthcheck?: { test: string[] };
  restart?: string;
}

const root = join(__dirname, '..', '..');
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const s = compose.services;

test('has Temporal on PostgreSQL (schema set-up, server, registration), the UI, the worker and the API', () => {
  expect(Object.keys(s).sort()).toEqual([
    'api',
    'postgresql',
    'temporal',
    'temporal-register',
    'temporal-schema',
    'temporal-ui',
    'worker',
  ]);
  expect(s.postgresql!.image).toMatch(/^postgres:\d+/);
  expect(s.temporal!.environment).toMatchObject({ POSTGRES_SEEDS: 'postgresql', DB_PORT: '5432' });
  expect(s['temporal-ui']!.environment!.TEMPORAL_ADDRESS).toBe('temporal:7233');
  // The order: schema (after PostgreSQL is healthy) → server → registration → UI, worker and API.
  expect(s['temporal-schema']!.depends_on).toEqual({ postgresql: { condition: 'service_healthy' } });
  expect(s.temporal!.depends_on).toEqual({ 'temporal-schema': { condition: 'service_completed_successfully' } });
  expect(s['temporal-register']!.depends_on).toEqual({ temporal: { condition: 'service_started' } });
  expect(s['temporal-ui']!.depends_on).toEqual({
    'temporal-register': { condition: 'service_completed_successfully' },
  });
});

test(
  'images match the server and UI versions the cluster stack builds and the dev server runs (Server 1.29.1, UI ' +
    '2.42.1)',
  () => {
    expect(s.temporal!.image).toBe('temporalio/server:1.29.1');
    expect(s['temporal-schema']!.image).toBe('temporalio/admin-tools:1.29.1');
    expect(s['temporal-register']!.image).toBe('temporalio/admin-tools:1.29.1');
    expect(s['temporal-ui']!.image).toBe('temporalio/ui:2.42.1');
  },
);

test(
  'the schema and registration services run the scripts of deploy/temporal, with the database password given by ' +
    'environment',
  () => {
    expect(s['temporal-schema']!.entrypoint).toEqual(['/bin/sh', '/etc/target-health/temporal/setup-schema.sh']);
    expect(s['temporal-register']!.entrypoint).toEqual(['/bin/sh', '/etc/target-health/temporal/register.sh']);
    expect(s['temporal-register']!.environment!.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(s['temporal-schema']!.environment!.POSTGRES_PWD).toBe(s.postgresql!.environment!.POSTGRES_PASSWORD);
    expect(s.temporal!.environment!.POSTGRES_PWD).toBe(s.postgresql!.environment!.POSTGRES_PASSWORD);
  },
);

test('the worker is built here and points at the stack by service name', () => {
  const w = s.worker!;
  expect(w.build).toBe('.');
  expect(w.environment!.TEMPORAL_ADDRESS).toBe('temporal:7233');
  const db = new URL(w.environment!.DATABASE_URL!);
  expect(db.hostname).toBe('postgresql');
  expect(db.pathname).toBe('/target_health');
  expect(db.username).toBe(s.postgresql!.environment!.POSTGRES_USER);
  expect(db.password).toBe(s.postgresql!.environment!.POSTGRES_PASSWORD);
  expect(w.depends_on).toMatchObject({
    postgresql: { condition: 'service_healthy' },
    'temporal-register': { condition: 'service_completed_successfully' },
  });
});

test(
  'the API runs the same image as the worker: migrate, then `target-health api` on 0.0.0.0:8787, probed on ' +
    '/healthz',
  () => {
    const a = s.api!;
    expect(a.build).toBe(s.worker!.build);
    expect(a.entrypoint).toEqual(['/bin/sh', '-c']);
    expect(a.command).toEqual([
      'node client/bin/target-health.js migrate && exec node client/bin/target-health.js api',
    ]);
    // The bin the command names is the one the Dockerfile copies into the image.
    expect(readFileSync(join(root, 'Dockerfile'), 'utf8')).toMatch(
      /COPY --from=build \/app\/client\/bin \.\/client\/bin/,
    );
    expect(a.environment).toMatchObject({
      TH_API_HOST: '0.0.0.0',
      TH_API_PORT: '8787',
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_NAMESPACE: 'default',
    });
    expect(a.environment!.DATABASE_URL).toBe(s.worker!.environment!.DATABASE_URL);
    expect(a.ports).toEqual(['8787:8787']);
    expect(a.depends_on).toEqual({
      postgresql: { condition: 'service_healthy' },
      'temporal-register': { condition: 'service_completed_successfully' },
    });
    const probe = a.healthcheck!.test;
    expect(probe.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
    expect(probe[3]).toContain("fetch('http://127.0.0.1:8787/healthz')");
    // The probe is valid JavaScript (compiled here, run in the container).
    expect(() => new Script(probe[3]!)).not.toThrow();
    expect(a.restart).toBe('unless-stopped');
  },
);

test('the API settings in the compose file are ones the API accepts', () => {
  expect(loadApiSettings(s.api!.environment ?? {})).toMatchObject({ TH_API_HOST: '0.0.0.0', TH_API_PORT: 8787 });
});

test("the application's database is created by the mounted init script", () => {
  const mount = s.postgresql!.volumes!.find((v) => v.includes('docker-entrypoint-initdb.d'));
  expect(mount).toBeDefined();
  const hostPath = mount!.split(':')[0]!;
  expect(readFileSync(join(root, hostPath), 'utf8')).toMatch(/CREATE DATABASE target_health/);
});

test('the Dockerfile builds and runs the worker entry with the migrations alongside', () => {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
  expect(dockerfile).toMatch(/RUN npm ci/);
  expect(dockerfile).toMatch(/COPY --from=build \/app\/server\/db\/migrations \.\/server\/db\/migrations/);
  // The worker imports the event schema and classifier from the crawler package, linked from node_modules.
  expect(dockerfile).toMatch(/COPY packages\/crawler\/package.json \.\/packages\/crawler\/\nRUN npm ci/);
  expect(dockerfile).toMatch(/COPY --from=build \/app\/packages\/crawler\/dist \.\/packages\/crawler\/dist/);
  expect(dockerfile).toMatch(/CMD \["node", "dist\/worker\/main.js"\]/);
});

test('its PostgreSQL runs with the settings the embedded server uses for the signal store', () => {
  const command = s.postgresql!.command!;
  expect(command[0]).toBe('postgres');
  const settings = Object.fromEntries(
    command
      .slice(1)
      .filter((_, i) => i % 2 === 1)
      .map((kv) => kv.split('=') as [string, string]),
  );
  expect(
    command
      .slice(1)
      .filter((_, i) => i % 2 === 0)
      .every((flag) => flag === '-c'),
  ).toBe(true);
  expect(settings).toEqual(EMBEDDED_POSTGRES_SETTINGS);
});
