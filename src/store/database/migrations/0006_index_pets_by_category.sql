-- Serves listPets filtered by categoryId in id order, alone and with status: each a keyset range
-- scan (WHERE category_id = $1 [AND status = $2] AND id > $3 ORDER BY id LIMIT $4), so a deep
-- page of a category costs what its first page costs. Built inside the migrations' transaction:
-- creates wait for it (about a second per million animals, docs/operations.md).
CREATE INDEX pets_category_id_id_idx ON pets (category_id, id);
CREATE INDEX pets_category_id_status_id_idx ON pets (category_id, status, id);
