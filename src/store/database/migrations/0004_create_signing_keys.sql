-- Secrets the service signs with, shared by every instance and kept across restarts and
-- deploys, so that a token one instance issued is accepted by all of them.
CREATE TABLE signing_keys (
  purpose    text        PRIMARY KEY,
  secret     bytea       NOT NULL CHECK (octet_length(secret) = 32),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- listPets' page cursors (HMAC-SHA-256). gen_random_uuid() draws from the server's strong
-- random source: two of them carry 244 random bits, hashed into a 32-byte key.
INSERT INTO signing_keys (purpose, secret)
VALUES ('page-cursor', sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')));
