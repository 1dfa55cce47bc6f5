/**
 * The cluster stack's settings: the shared values of deploy/temporal/cluster.env (docker-compose.yml
 * reads the same file), plus what is this machine's own — the PostgreSQL it runs on, the ports, the
 * dynamic config file's path. The environments the server, its SQL tool and the registration script run
 * with are built here, in one place.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { PROJECT_ROOT } from '../../server/config/paths';

export const CLUSTER_DEPLOY_DIR = join(PROJECT_ROOT, 'deploy', 'temporal');
export const CLUSTER_ENV_FILE = join(CLUSTER_DEPLOY_DIR, 'cluster.env');
export const DYNAMIC_CONFIG_FILE = join(CLUSTER_DEPLOY_DIR, 'dynamicconfig.yaml');

/** The values in deploy/temporal/cluster.env. */
export function loadClusterEnv(file = CLUSTER_ENV_FILE): Record<string, string> {
  const values = parseEnv(readFileSync(file, 'utf8'));
  return Object.fromEntries(Object.entries(values).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

export interface ClusterPorts {
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  frontendMembership: number;
  historyMembership: number;
  matchingMembership: number;
  workerMembership: number;
  metrics: number;
}

/** The ports of docker-compose.yml's server (and `npm run stack:cluster` by default). */
export const DEFAULT_CLUSTER_PORTS: ClusterPorts = {
  frontend: 7233,
  frontendHttp: 7243,
  history: 7234,
  matching: 7235,
  worker: 7239,
  frontendMembership: 6933,
  historyMembership: 6934,
  matchingMembership: 6935,
  workerMembership: 6939,
  metrics: 8000,
};

export interface ClusterDatabase {
  host: string;
  port: number;
  user: string;
  password: string;
}

/** Only what a child needs from this process's environment: no secrets of ours leak into it. */
function baseEnv(): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ', 'XDG_CACHE_HOME'];
  return Object.fromEntries(keep.flatMap((k) => (process.env[k] !== undefined ? [[k, process.env[k]]] : [])));
}

/** The connection values the schema script and the server's config template read. */
function databaseEnv(db: ClusterDatabase): Record<string, string> {
  return { POSTGRES_SEEDS: db.host, DB_PORT: String(db.port), POSTGRES_USER: db.user, POSTGRES_PWD: db.password };
}

export function serverEnv(shared: Record<string, string>, db: ClusterDatabase, ports: ClusterPorts): NodeJS.ProcessEnv {
  return {
    ...baseEnv(),
    ...shared,
    ...databaseEnv(db),
    BIND_ON_IP: '127.0.0.1',
    TEMPORAL_BROADCAST_ADDRESS: '127.0.0.1',
    DYNAMIC_CONFIG_FILE_PATH: DYNAMIC_CONFIG_FILE,
    FRONTEND_GRPC_PORT: String(ports.frontend),
    FRONTEND_HTTP_PORT: String(ports.frontendHttp),
    HISTORY_GRPC_PORT: String(ports.history),
    MATCHING_GRPC_PORT: String(ports.matching),
    WORKER_GRPC_PORT: String(ports.worker),
    FRONTEND_MEMBERSHIP_PORT: String(ports.frontendMembership),
    HISTORY_MEMBERSHIP_PORT: String(ports.historyMembership),
    MATCHING_MEMBERSHIP_PORT: String(ports.matchingMembership),
    WORKER_MEMBERSHIP_PORT: String(ports.workerMembership),
    PROMETHEUS_PORT: String(ports.metrics),
  };
}

export function schemaEnv(shared: Record<string, string>, db: ClusterDatabase, sqlTool: string): NodeJS.ProcessEnv {
  return { ...baseEnv(), ...shared, ...databaseEnv(db), TEMPORAL_SQL_TOOL: sqlTool };
}

export function registerEnv(shared: Record<string, string>, address: string, temporalCli: string): NodeJS.ProcessEnv {
  return { ...baseEnv(), ...shared, TEMPORAL_ADDRESS: address, TEMPORAL_CLI: temporalCli };
}

/** The temporalio/ui image's own configuration (docker.yaml) reads these. */
export function uiEnv(shared: Record<string, string>, address: string, uiPort: number): NodeJS.ProcessEnv {
  return {
    ...baseEnv(),
    TEMPORAL_ADDRESS: address,
    TEMPORAL_UI_PORT: String(uiPort),
    TEMPORAL_DEFAULT_NAMESPACE: shared.DEFAULT_NAMESPACE ?? 'default',
    // Served on 127.0.0.1 only (below); the UI's CSRF cookie is then sent over plain HTTP.
    TEMPORAL_CSRF_COOKIE_INSECURE: 'true',
  };
}
