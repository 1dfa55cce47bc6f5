-- Up Migration

-- Bearer tokens of the HTTP API (api/, docs/api.md). Only a SHA-256 hash of each secret is stored: a
-- token is printed once by `target-health token create` and cannot be read back. `name` is who the token
-- acts for: it is the actor recorded in the audit trail of a decision made with it.
CREATE TABLE api_tokens (
  name        text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$'),
  token_hash  bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
  -- The first characters of the secret (`th_AbC1…`), so a person can tell tokens apart in `token list`.
  prefix      text NOT NULL,
  scopes      text[] NOT NULL CHECK (scopes <@ ARRAY['ingest', 'read', 'decide', 'admin']::text[] AND cardinality(scopes) > 0),
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz,
  last_used_at timestamptz
);

-- Every change of a site's controls is announced on the channel `th_controls` (payload: the site and the
-- new version), so the API's controls cache and its SSE stream learn of a pause at once, without polling
-- the table. NOTIFY is transactional: it is delivered only if the change commits.
CREATE FUNCTION th_notify_controls() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('th_controls', json_build_object('site', NEW.site, 'version', NEW.version)::text);
  RETURN NEW;
END $$;

CREATE TRIGGER site_controls_notify AFTER INSERT OR UPDATE ON site_controls
  FOR EACH ROW EXECUTE FUNCTION th_notify_controls();
