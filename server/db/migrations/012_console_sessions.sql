-- Up Migration

-- Sessions of the web console (server/console/, docs/console.md). A person signs in with an API token once;
-- the browser then holds a random session id in an HttpOnly cookie, never the token. Only the SHA-256 hash
-- of the id is stored, so this table holds nothing a browser could present. A session acts as its token:
-- it ends with the token's revocation (the lookup joins api_tokens), and its scopes are the token's.
-- Expiry (12 h idle, 7 days after sign-in) is checked by the server on each request; expired rows are
-- deleted when presented, and by sign-in's sweep of rows past the absolute limit.
CREATE TABLE console_sessions (
  id_hash      bytea PRIMARY KEY CHECK (length(id_hash) = 32),
  token_name   text NOT NULL REFERENCES api_tokens (name) ON DELETE CASCADE,
  -- The per-session CSRF token every form carries: not a credential on its own (it is useless without
  -- the cookie), so it is kept as is and rendered into the session's pages.
  csrf_token   text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX console_sessions_created_at ON console_sessions (created_at);

-- Down Migration
DROP TABLE console_sessions;
