-- Requests per API key per fixed window, shared by every instance of the service.
CREATE TABLE rate_limit_counts (
  owner        text    NOT NULL, -- SHA-256 of the API key (hex)
  window_start bigint  NOT NULL, -- start of the window, in seconds since the epoch
  count        integer NOT NULL CHECK (count >= 0),
  PRIMARY KEY (owner, window_start)
);

-- Serves the sweep of past windows: DELETE … WHERE window_start < $1.
CREATE INDEX rate_limit_counts_window_start_idx ON rate_limit_counts (window_start);
