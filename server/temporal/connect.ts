/**
 * Connections to Temporal from the settings in the environment (local dev server, a self-hosted
 * cluster with mTLS, or Temporal Cloud with an API key). A server that cannot be reached is a user
 * error with one line naming TEMPORAL_ADDRESS.
 */
import { Connection, type ConnectionOptions } from '@temporalio/client';
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';
import { UserError } from '../../core/common/user-error';
import type { TemporalSettings } from '../config/env';

const CONNECT_TIMEOUT_MS = 10_000;

function describeFailure(settings: TemporalSettings, err: unknown): UserError {
  const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0]?.slice(0, 200) ?? 'unknown error';
  const hint = settings.tls
    ? 'check the address and the TLS / API-key settings'
    : 'is the server running? (`npm start` runs a local one; for Temporal Cloud set TEMPORAL_API_KEY or the TLS ' +
      'variables)';
  return new UserError(`TEMPORAL_ADDRESS: cannot connect to Temporal at ${settings.address} (${reason}); ${hint}`);
}

function tlsOptions(settings: TemporalSettings): ConnectionOptions['tls'] {
  if (!settings.tls) return undefined;
  return {
    ...(settings.tls.serverNameOverride ? { serverNameOverride: settings.tls.serverNameOverride } : {}),
    ...(settings.tls.serverRootCACertificate ? { serverRootCACertificate: settings.tls.serverRootCACertificate } : {}),
    ...(settings.tls.clientCertPair ? { clientCertPair: settings.tls.clientCertPair } : {}),
  };
}

/** A client connection (CLI, tests), checked with a real call so a wrong address fails here. */
export async function connectClient(settings: TemporalSettings): Promise<Connection> {
  const options: ConnectionOptions = {
    address: settings.address,
    connectTimeout: CONNECT_TIMEOUT_MS,
    ...(settings.tls ? { tls: tlsOptions(settings) } : {}),
    ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
  };
  try {
    const connection = await Connection.connect(options);
    await connection.workflowService.getSystemInfo({});
    return connection;
  } catch (err) {
    throw describeFailure(settings, err);
  }
}

/** The worker's native (Rust core) connection. */
export async function connectWorker(settings: TemporalSettings): Promise<NativeConnection> {
  const options: NativeConnectionOptions = {
    address: settings.address,
    ...(settings.tls ? { tls: tlsOptions(settings) } : {}),
    ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
  };
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`)), CONNECT_TIMEOUT_MS).unref(),
  );
  try {
    return await Promise.race([NativeConnection.connect(options), timeout]);
  } catch (err) {
    throw describeFailure(settings, err);
  }
}
