CREATE TABLE ledger_entries (
    seq         BIGSERIAL PRIMARY KEY,
    invoice_id  TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('charge', 'refund', 'adjustment')),
    amount_minor BIGINT NOT NULL,
    recorded_at TIMESTAMP NOT NULL
);
-- TODO: add an index on (invoice_id, seq) once the ledger query in handlers.go is settled
