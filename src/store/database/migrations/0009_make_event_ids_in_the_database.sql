-- An event's id is made where its row is written: 'evt_' and 24 characters of [0-9A-Za-z], each
-- from two random bytes of gen_random_uuid() (PostgreSQL 13+, no extension) taken modulo 62, so
-- that no character is likelier than another by more than 2 in 65,536. The version and variant
-- bits of each UUID (its 7th and 9th bytes' high bits) are skipped: only its 14 random bytes are read.
CREATE FUNCTION webhook_event_id() RETURNS text LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT 'evt_' || string_agg(
    substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
           1 + ((get_byte(bytes, 2 * i) * 256 + get_byte(bytes, 2 * i + 1)) % 62), 1),
    '' ORDER BY i)
  FROM (
    SELECT string_agg(substr(u, 1, 6) || substr(u, 8, 1) || substr(u, 10), ''::bytea) AS bytes
    FROM (SELECT uuid_send(gen_random_uuid()) AS u FROM generate_series(1, 4)) uuids
  ) drawn, generate_series(0, 23) i
$$;
ALTER TABLE webhook_events ALTER COLUMN id SET DEFAULT webhook_event_id();
