CREATE TABLE invoices (
    id          TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL,
    region      TEXT NOT NULL,
    currency    TEXT NOT NULL,
    total_minor BIGINT NOT NULL,
    created_at  TIMESTAMP NOT NULL
);

CREATE TABLE invoice_lines (
    invoice_id  TEXT NOT NULL REFERENCES invoices(id),
    line_no     INT NOT NULL,
    sku         TEXT NOT NULL,
    quantity    INT NOT NULL,
    unit_minor  BIGINT NOT NULL,
    PRIMARY KEY (invoice_id, line_no)
);
