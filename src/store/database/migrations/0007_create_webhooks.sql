-- Webhooks (docs/webhooks.md): endpoints a client subscribes, the events of the catalogue
-- (a transactional outbox: written by the create's own statement), one delivery per event and
-- endpoint, and the attempts made.

-- A client's subscription (at most 20 a client, which the API keeps). `secret` signs (Standard Webhooks: HMAC-SHA256 under these 32 bytes);
-- it is kept as it is, since signing needs it, and is shown to the client only when made.
-- `previous_secret` still signs beside it until `previous_secret_expires_at` (a rotation's grace).
CREATE TABLE webhook_endpoints (
  id                         text        PRIMARY KEY CHECK (id ~ '^we_[0-9A-Za-z]{16}$'),
  client_id                  text        NOT NULL,
  url                        text        NOT NULL CHECK (char_length(url) BETWEEN 1 AND 2048),
  events                     text[]      NOT NULL CHECK (cardinality(events) BETWEEN 1 AND 10),
  description                text        CHECK (char_length(description) <= 500),
  secret                     bytea       NOT NULL CHECK (octet_length(secret) = 32),
  previous_secret            bytea       CHECK (octet_length(previous_secret) = 32),
  previous_secret_expires_at timestamptz,
  disabled_at                timestamptz,
  disabled_reason            text        CHECK (char_length(disabled_reason) <= 1000),
  failing_since              timestamptz, -- the first failed attempt after the last delivered one
  created_at                 timestamptz NOT NULL DEFAULT now(),
  -- Deleted by its owner: nothing more is sent, and the sweep removes it (and its deliveries)
  -- later. An UPDATE, not a DELETE, so that a delete whose COMMIT's answer was lost can still be
  -- told committed or not by its row (commitWithin), as every write of the API is.
  deleted_at                 timestamptz
);
CREATE INDEX webhook_endpoints_client_id_idx ON webhook_endpoints (client_id, created_at);

-- An event, written in the transaction of what it reports, only when an endpoint is subscribed to it.
CREATE TABLE webhook_events (
  id         text        PRIMARY KEY CHECK (id ~ '^evt_[0-9A-Za-z]{24}$'),
  type       text        NOT NULL,
  data       jsonb       NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- Serves the sweep of events past their retention.
CREATE INDEX webhook_events_created_at_idx ON webhook_events (created_at);

-- One event to one endpoint. A worker claims a pending delivery whose `due_at` has come by
-- moving `due_at` past the attempt's longest end (FOR UPDATE SKIP LOCKED: any instance's worker,
-- one statement, so behind a transaction-mode pooler too); an instance that dies mid-attempt
-- leaves it due again then, and another delivers it: at least once.
CREATE TABLE webhook_deliveries (
  endpoint_id text        NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id    text        NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
  state       text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts    integer     NOT NULL DEFAULT 0,
  due_at      timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  PRIMARY KEY (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (due_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_event_id_idx ON webhook_deliveries (event_id);

-- What each attempt met, for the endpoint's owner (GET shows the last ten) and the operator.
CREATE TABLE webhook_attempts (
  id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id text        NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id    text        NOT NULL,
  at          timestamptz NOT NULL,
  outcome     text        NOT NULL CHECK (outcome IN ('delivered', 'http_status', 'timeout', 'connection_failed', 'refused_target')),
  status      integer     CHECK (status BETWEEN 100 AND 599),
  duration_ms integer     NOT NULL CHECK (duration_ms >= 0),
  error       text        CHECK (char_length(error) <= 500)
);
CREATE INDEX webhook_attempts_endpoint_id_idx ON webhook_attempts (endpoint_id, id);
CREATE INDEX webhook_attempts_at_idx ON webhook_attempts (at);
