/**
 * What CLI commands need, created lazily: a command that only reads a file never asks for a database
 * or a Temporal server, and every connection is closed when the command ends.
 */
import type { Client } from '@temporalio/client';
import type * as TemporalClientModule from '@temporalio/client';
import type * as ConnectModule from '../server/temporal/connect';
import { loadDatabaseUrl, loadTemporalSettings, loadTemporalUiUrl, type TemporalSettings } from '../server/config/env';
import { checkDatabase, createPool, type Pool } from '../server/db/pool';

export class CliContext {
  private pool?: Pool;
  private client?: Client;
  private closeConnection?: () => Promise<void>;
  private settings?: TemporalSettings;

  temporalSettings(): TemporalSettings {
    this.settings ??= loadTemporalSettings();
    return this.settings;
  }

  uiUrl(): string {
    return loadTemporalUiUrl();
  }

  async db(): Promise<Pool> {
    if (!this.pool) {
      const url = loadDatabaseUrl();
      const pool = createPool(url, 4);
      await checkDatabase(pool, url).catch(async (err: unknown) => {
        await pool.end();
        throw err;
      });
      this.pool = pool;
    }
    return this.pool;
  }

  async temporal(): Promise<Client> {
    if (!this.client) {
      const settings = this.temporalSettings();
      // Loaded here, not at the top: commands that never talk to Temporal start without the SDK.
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose
      const { connectClient } = require('../server/temporal/connect') as typeof ConnectModule;
      const connection = await connectClient(settings);
      this.closeConnection = () => connection.close();
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose
      const { Client: TemporalClient } = require('@temporalio/client') as typeof TemporalClientModule;
      this.client = new TemporalClient({ connection, namespace: settings.namespace });
    }
    return this.client;
  }

  async close(): Promise<void> {
    await this.pool?.end();
    await this.closeConnection?.();
  }
}
