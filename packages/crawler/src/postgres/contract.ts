/**
 * The database contract between crawlers that write to PostgreSQL directly and the Target Health server,
 * which owns these objects (its migration db/migrations/010_event_inbox.sql) and keeps the store itself to
 * itself. A crawler needs only: INSERT on the inbox, SELECT on the controls view, LISTEN (docs/security.md
 * "A least-privilege role for crawlers"). The server imports these names from here: one copy.
 */

/**
 * Event batches waiting for the server's drainer:
 * `(batch_id text PK, events bytea: gzip of NDJSON, event_count int, received_at)`.
 */
export const INBOX_TABLE = 'event_inbox';
/** Notified (no payload) by the inbox's trigger for every batch inserted. */
export const INBOX_CHANNEL = 'th_event_inbox';
/** The fields of each site's controls a crawler obeys (a view of the server's `site_controls`). */
export const CONTROLS_VIEW = 'crawler_controls';
/** Notified with `{"site": …, "version": …}` on every change of a site's controls. */
export const CONTROLS_CHANNEL = 'th_controls';

/**
 * Batch ids the sink makes: `b1:` + SHA-256 (hex) of the batch part's event ids (the table's CHECK
 * allows `[A-Za-z0-9:_-]{1,100}`).
 */
export const BATCH_ID_PREFIX = 'b1:';
