/**
 * What a sink reports for a batch: the same shape the server's ingester and its `POST /v1/events`
 * answer report, defined here (the crawler side) so the server re-uses it rather than keeping a copy.
 */
export interface RejectedLine {
  /** 1-based line number (or index + 1 for the library recorder). */
  line: number;
  errors: string[];
}

export interface IngestResult {
  /** Valid events handed to the store. */
  accepted: number;
  /** Of those, stored for the first time (the rest were repeats of an event id: ignored). */
  inserted: number;
  duplicates: number;
  rejected: RejectedLine[];
}
