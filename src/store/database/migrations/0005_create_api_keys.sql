-- API keys as managed records (docs/operations.md, Keys). A client is who calls; it owns its
-- keys and what it did (Idempotency-Key records, rate-limit counts), so rotating a key keeps them.
CREATE TABLE api_clients (
  id         text        PRIMARY KEY CHECK (id ~ '^cl_[0-9A-Za-z]{12}$'),
  name       text        NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,62}$'),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- A key is shown once, when it is made; only the SHA-256 of its whole text is kept (a key carries
-- at least 190 random bits: no guess or precomputed table reaches one, so a slow hash would add
-- cost per request and no safety). `prefix` is what may be displayed: the key's id, never its secret.
CREATE TABLE api_keys (
  id           text        PRIMARY KEY CHECK (id ~ '^[0-9A-Za-z]{12}$'),
  client_id    text        NOT NULL REFERENCES api_clients (id),
  prefix       text        NOT NULL,
  digest       bytea       NOT NULL UNIQUE CHECK (octet_length(digest) = 32),
  scopes       text        NOT NULL CHECK (scopes ~ '^[a-z][a-z0-9:._-]*( [a-z][a-z0-9:._-]*)*$'), -- space-separated, as OAuth's scope
  note         text        CHECK (char_length(note) <= 500),
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz,
  revoked_at   timestamptz,
  last_used_at timestamptz, -- to the minute: written at most once a minute per key, never per request
  replaces     text        REFERENCES api_keys (id), -- the key this one succeeds (rotation)
  revision     bigint      NOT NULL -- api_key_revision.revision of the row's last change
);

-- Serves each instance's refresh: the keys changed since the revision it has seen.
CREATE INDEX api_keys_revision_idx ON api_keys (revision);
CREATE INDEX api_keys_client_id_idx ON api_keys (client_id);

-- One row, updated in the transaction of every change to api_keys: its row lock orders those
-- transactions, so revisions become visible in the order they are numbered, and an instance
-- that has seen revision n has seen every change up to n. Instances poll it (one primary-key
-- read), which works behind a transaction-mode pooler, where LISTEN does not.
CREATE TABLE api_key_revision (
  singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  revision   bigint  NOT NULL
);
INSERT INTO api_key_revision (revision) VALUES (0);

-- Every create, rotate and revoke: who (the operator, --actor), when, what. Never a secret.
CREATE TABLE api_key_audit (
  id        bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at        timestamptz NOT NULL DEFAULT now(),
  actor     text        NOT NULL CHECK (char_length(actor) BETWEEN 1 AND 200),
  action    text        NOT NULL CHECK (action IN ('create', 'rotate', 'revoke')),
  key_id    text        NOT NULL REFERENCES api_keys (id),
  client_id text        NOT NULL REFERENCES api_clients (id),
  details   jsonb       NOT NULL -- scopes, expiry, grace, successor, note
);

-- What a caller did belongs to its client, no longer to one key. Records made so far belong to
-- API_KEYS keys, each its own client `env:` + the first 16 hex digits of its SHA-256: renamed.
ALTER TABLE idempotency_keys RENAME COLUMN owner TO client_id;
UPDATE idempotency_keys SET client_id = 'env:' || left(client_id, 16) WHERE client_id ~ '^[0-9a-f]{64}$';
ALTER TABLE rate_limit_counts RENAME COLUMN owner TO client_id;
UPDATE rate_limit_counts SET client_id = 'env:' || left(client_id, 16) WHERE client_id ~ '^[0-9a-f]{64}$';
