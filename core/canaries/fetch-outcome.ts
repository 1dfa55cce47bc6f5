/**
 * What one canary fetch brought back, as the judge reads it. server/canary-runner/fetch.ts produces it (with
 * undici); the type lives here so the verdict (judge.ts) stays pure and testable without a network.
 */
import type { NetworkError } from '@target-health/crawler/events/event';

interface Timing {
  latencyMs: number;
  viaProxy: boolean;
}

export type FetchOutcome =
  | (Timing & {
      kind: 'response';
      status: number;
      /** Lower-case names; repeated headers joined with "\n" (the event schema's form). */
      headers: Record<string, string>;
      /** Decoded body, at most maxBodyBytes of it. */
      body: string;
      /** Bytes read (decompressed), or Content-Length when reading stopped at the cap and it is larger. */
      bytes: number;
      truncated: boolean;
    })
  | (Timing & { kind: 'network-error'; networkError: NetworkError; message: string });
