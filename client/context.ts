/**
 * What CLI commands need, created lazily: a command that only reads a file never asks for a database
 * or a Temporal server, and every connection is closed when the command ends.
 */
import { Client } from '@temporalio/client';
import { loadDatabaseUrl, loadTemporalSettings, loadTemporalUiUrl, type TemporalSettings } from '../config/env';
import { checkDatabase, createPool, type Pool } from '../db/pool';
import { connectClient } from '../temporal/connect';

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
      const connection = await connectClient(settings);
      this.closeConnection = () => connection.close();
      this.client = new Client({ connection, namespace: settings.namespace });
    }
    return this.client;
  }

  async close(): Promise<void> {
    await this.pool?.end();
    await this.closeConnection?.();
  }
}
