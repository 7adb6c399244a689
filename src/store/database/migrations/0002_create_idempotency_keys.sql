-- Idempotency-Key records for createPet (IETF httpapi idempotency-key draft): the first
-- response to a key, replayed to a retry of the same request until the record expires.
CREATE TABLE idempotency_keys (
  owner       text        NOT NULL, -- SHA-256 of the caller's API key (hex): keys are scoped to the caller
  key         text        NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
  fingerprint text        NOT NULL, -- SHA-256 of the request body as sent (hex)
  status      integer     NOT NULL,
  response    text        NOT NULL, -- the response body, as JSON text
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  PRIMARY KEY (owner, key)
);

-- Serves the sweep of expired records: DELETE … WHERE expires_at < now().
CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);
