/**
 * docker-compose.yml and `npm run stack:cluster` run Temporal with one configuration: the values of
 * deploy/temporal/cluster.env, the server's template deploy/temporal/config/cluster.yaml and the set-up
 * scripts beside them. No Docker engine runs here, so the compose side is checked by reading it; the
 * stack side is run for real by test/cluster.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ALL_SEARCH_ATTRIBUTE_KEYS } from '../../loop/search-attributes';
import { TEMPORAL_SERVER_VERSION, TEMPORAL_UI_SERVER_VERSION } from '../../stack/cluster/binaries';
import {
  CLUSTER_DEPLOY_DIR,
  DEFAULT_CLUSTER_PORTS,
  loadClusterEnv,
  registerEnv,
  schemaEnv,
  serverEnv,
} from '../../stack/cluster/settings';

interface Service {
  image?: string;
  env_file?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  command?: string[];
}

const root = join(__dirname, '..', '..');
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8')) as { services: Record<string, Service> };
const s = compose.services;
const shared = loadClusterEnv();
const template = readFileSync(join(CLUSTER_DEPLOY_DIR, 'config', 'cluster.yaml'), 'utf8');
const db = { host: '127.0.0.1', port: 5999, user: 'u', password: 'p' };

/** Every `env "NAME"` the server's template reads, with its default when it has one. */
function templateVariables(): Map<string, string | undefined> {
  const vars = new Map<string, string | undefined>();
  for (const m of template.matchAll(/env "([A-Z0-9_]+)"(?:\s*\|\s*default "([^"]*)")?/g)) {
    if (!vars.has(m[1]!) || vars.get(m[1]!) === undefined) vars.set(m[1]!, m[2]);
  }
  return vars;
}

test('the template is rendered by the server itself, and holds no password', () => {
  expect(template.split('\n')[0]).toBe('# enable-template');
  expect(template).not.toMatch(/password: "(?!\{\{)/);
});

test('every Temporal service in compose reads cluster.env and mounts deploy/temporal', () => {
  for (const name of ['temporal-schema', 'temporal', 'temporal-register']) {
    expect(s[name]!.env_file).toBe('./deploy/temporal/cluster.env');
    expect(s[name]!.volumes).toContain('./deploy/temporal:/etc/target-health/temporal:ro');
  }
  // The server loads the mounted template; the environment name comes from cluster.env.
  expect(s.temporal!.command!.join(' ')).toContain(
    'temporal-server --root / --config etc/target-health/temporal/config start',
  );
  expect(shared.TEMPORAL_ENVIRONMENT).toBe('cluster');
  expect(s.temporal!.environment!.DYNAMIC_CONFIG_FILE_PATH).toBe('/etc/target-health/temporal/dynamicconfig.yaml');
});

test(
  'the stack passes every shared value through unchanged to the server, ' + 'the schema script and the registration',
  () => {
    const server = serverEnv(shared, db, DEFAULT_CLUSTER_PORTS);
    const schema = schemaEnv(shared, db, '/x/temporal-sql-tool');
    const register = registerEnv(shared, '127.0.0.1:7233', '/x/temporal');
    for (const [k, v] of Object.entries(shared)) {
      expect([k, server[k]]).toEqual([k, v]);
      expect([k, schema[k]]).toEqual([k, v]);
      expect([k, register[k]]).toEqual([k, v]);
    }
    expect(Object.keys(shared)).toEqual(
      expect.arrayContaining(['DB', 'DBNAME', 'VISIBILITY_DBNAME', 'NUM_HISTORY_SHARDS', 'DEFAULT_NAMESPACE']),
    );
  },
);

test('every value the template reads is given by both environments, or its default is what compose means', () => {
  const vars = templateVariables();
  const server = serverEnv(shared, db, DEFAULT_CLUSTER_PORTS);
  const composeEnv = { ...shared, ...s.temporal!.environment };
  // Set by compose's command line at start (the container's own address).
  const composeCommandSets = new Set(['TEMPORAL_BROADCAST_ADDRESS']);
  const portDefaults: Record<string, number> = {
    FRONTEND_GRPC_PORT: DEFAULT_CLUSTER_PORTS.frontend,
    FRONTEND_HTTP_PORT: DEFAULT_CLUSTER_PORTS.frontendHttp,
    HISTORY_GRPC_PORT: DEFAULT_CLUSTER_PORTS.history,
    MATCHING_GRPC_PORT: DEFAULT_CLUSTER_PORTS.matching,
    WORKER_GRPC_PORT: DEFAULT_CLUSTER_PORTS.worker,
    FRONTEND_MEMBERSHIP_PORT: DEFAULT_CLUSTER_PORTS.frontendMembership,
    HISTORY_MEMBERSHIP_PORT: DEFAULT_CLUSTER_PORTS.historyMembership,
    MATCHING_MEMBERSHIP_PORT: DEFAULT_CLUSTER_PORTS.matchingMembership,
    WORKER_MEMBERSHIP_PORT: DEFAULT_CLUSTER_PORTS.workerMembership,
    PROMETHEUS_PORT: DEFAULT_CLUSTER_PORTS.metrics,
  };
  expect(vars.size).toBeGreaterThan(15);
  for (const [name, fallback] of vars) {
    expect([name, server[name] !== undefined]).toEqual([name, true]);
    if (name in composeEnv || composeCommandSets.has(name)) continue;
    // Not set in compose: the template's default applies there, and it must be docker-compose.yml's port.
    expect([name, fallback]).toEqual([name, String(portDefaults[name])]);
  }
  // The frontend's port is the one compose publishes.
  expect(s.temporal!.command!.join(' ')).toContain('TEMPORAL_BROADCAST_ADDRESS=$$(hostname -i)');
});

test('register.sh registers exactly the product search attributes, with their types', () => {
  const script = readFileSync(join(CLUSTER_DEPLOY_DIR, 'register.sh'), 'utf8');
  const list = /^SEARCH_ATTRIBUTES="([^"]+)"$/m.exec(script)![1]!.split(' ');
  const cliType: Record<string, string> = { KEYWORD: 'Keyword', INT: 'Int', BOOL: 'Bool' };
  expect(list.sort()).toEqual(ALL_SEARCH_ATTRIBUTE_KEYS.map((k) => `${k.name}=${cliType[k.type]}`).sort());
});

test("compose's images are the versions the cluster stack builds", () => {
  const server = TEMPORAL_SERVER_VERSION.replace(/^v/, '');
  expect(s.temporal!.image).toBe(`temporalio/server:${server}`);
  expect(s['temporal-schema']!.image).toBe(`temporalio/admin-tools:${server}`);
  expect(s['temporal-ui']!.image).toBe(`temporalio/ui:${TEMPORAL_UI_SERVER_VERSION.replace(/^v/, '')}`);
});

test('the dynamic config file both load is valid YAML of keys with value lists', () => {
  const dyn = parse(readFileSync(join(CLUSTER_DEPLOY_DIR, 'dynamicconfig.yaml'), 'utf8')) as Record<
    string,
    Array<{ value: unknown }>
  >;
  for (const [key, values] of Object.entries(dyn)) {
    expect(key).toMatch(/^[a-z]+\.[A-Za-z.]+$/);
    expect(Array.isArray(values) && values.every((v) => 'value' in v)).toBe(true);
  }
});

test(
  'the stack keeps Temporal on the loopback and its ' + 'database password out of command lines (docs/security.md)',
  () => {
    const server = serverEnv(shared, db, DEFAULT_CLUSTER_PORTS);
    expect(server.BIND_ON_IP).toBe('127.0.0.1');
    expect(server.TEMPORAL_BROADCAST_ADDRESS).toBe('127.0.0.1');
    // The SQL tool gets the password from its environment (SQL_PASSWORD), never as --pw on its command line.
    const script = readFileSync(join(CLUSTER_DEPLOY_DIR, 'setup-schema.sh'), 'utf8');
    expect(script).toMatch(/SQL_PASSWORD="\$\{POSTGRES_PWD:-\}"/);
    expect(script).not.toMatch(/--pw\b|--password\b/);
    // Nothing of this process's environment but the basics reaches the server (no DATABASE_URL, no tokens).
    const prev = process.env.TARGET_HEALTH_WEBHOOK_URL;
    process.env.TARGET_HEALTH_WEBHOOK_URL = 'https://hooks.example.com/secret';
    try {
      const env = serverEnv(shared, db, DEFAULT_CLUSTER_PORTS);
      expect(env.TARGET_HEALTH_WEBHOOK_URL).toBeUndefined();
      expect(env.DATABASE_URL).toBeUndefined();
    } finally {
      if (prev === undefined) delete process.env.TARGET_HEALTH_WEBHOOK_URL;
      else process.env.TARGET_HEALTH_WEBHOOK_URL = prev;
    }
  },
);
