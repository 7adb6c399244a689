-- The trace of the create that wrote an event (W3C traceparent), when that create was traced and
-- sampled: each delivery's span links to it (docs/webhooks.md, Metrics and traces). Null when
-- tracing is off, which is the default.
ALTER TABLE webhook_events
  ADD COLUMN trace_context text CHECK (trace_context ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');
