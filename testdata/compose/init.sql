-- Demo schema for docker-compose.yml: run once by the postgres image on an
-- empty data directory (/docker-entrypoint-initdb.d), in database "shop".
-- mooncdc creates its publication and slot itself.

CREATE TABLE customers (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email      text        NOT NULL UNIQUE,
    name       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE products (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    sku         text          NOT NULL UNIQUE,
    name        text          NOT NULL,
    price       numeric(10,2) NOT NULL CHECK (price >= 0),
    attributes  jsonb         NOT NULL DEFAULT '{}',
    in_stock    boolean       NOT NULL DEFAULT true
);

CREATE TABLE orders (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id bigint      NOT NULL REFERENCES customers (id),
    status      text        NOT NULL DEFAULT 'new'
                CHECK (status IN ('new', 'paid', 'shipped', 'cancelled')),
    ordered_at  timestamptz NOT NULL DEFAULT now(),
    ship_date   date
);

CREATE TABLE order_items (
    order_id   bigint        NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    line       integer       NOT NULL,
    product_id bigint        NOT NULL REFERENCES products (id),
    quantity   integer       NOT NULL CHECK (quantity > 0),
    unit_price numeric(10,2) NOT NULL,
    PRIMARY KEY (order_id, line)
);

INSERT INTO customers (email, name) VALUES
    ('ada@example.com',   'Ada Lovelace'),
    ('alan@example.com',  'Alan Turing'),
    ('grace@example.com', 'Grace Hopper');

INSERT INTO products (sku, name, price, attributes) VALUES
    ('MUG-01',  'Mug',      9.50, '{"color": "blue"}'),
    ('TEE-M',   'T-shirt', 19.00, '{"size": "M"}'),
    ('BOOK-42', 'Book',    42.00, '{"pages": 420}');

INSERT INTO orders (customer_id, status, ship_date) VALUES
    (1, 'paid',    current_date + 2),
    (2, 'new',     NULL),
    (3, 'shipped', current_date - 1);

INSERT INTO order_items (order_id, line, product_id, quantity, unit_price) VALUES
    (1, 1, 1, 2,  9.50),
    (1, 2, 3, 1, 42.00),
    (2, 1, 2, 3, 19.00),
    (3, 1, 3, 1, 42.00);
