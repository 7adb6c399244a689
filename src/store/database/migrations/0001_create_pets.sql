-- The catalogue of animals (spec: components.schemas.Pet).
CREATE TABLE pets (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  category_id bigint      NOT NULL,
  status      text        NOT NULL DEFAULT 'available' CHECK (status IN ('available', 'pending', 'sold')),
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Serves listPets filtered by status in id order: WHERE status = $1 ORDER BY id LIMIT $2.
CREATE INDEX pets_status_id_idx ON pets (status, id);
