"""Semi-joins: ``col IN (SELECT ...)``, ``NOT IN`` with SQL's NULL rules, correlated ``EXISTS`` and
``NOT EXISTS``, compared with SQLite holding the same rows. The subquery is read once by its own
plan; the outer rows are read by theirs and tested on the client, or, when the outer column is a
partition key of the table or of an index and the outer read would be a scan, fetched by the
subquery's values (50 an IN)."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    Engine,
    Integer,
    MetaData,
    String,
    Table,
    delete,
    exists,
    func,
    or_,
    select,
    tuple_,
    update,
)
from sqlalchemy.exc import CompileError
from support.beside_sqlite import filled_alike, rows_of, same_rows
from support.sent import requests_built

import sa_dynamo
from sa_dynamo.dialect.base import DynamoDBDialect
from sa_dynamo.exc import ScanNotAllowed

metadata = MetaData()
suffix = uuid.uuid4().hex[:8]
customers = Table(
    f"semi_customers_{suffix}",
    metadata,
    Column("id", String, primary_key=True),
    Column("region", String),
    Column("tier", Integer),
    Column("referrer", String),
)
orders = Table(
    f"semi_orders_{suffix}",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("customer_id", String, index=True),
    Column("total", Integer),
    Column("status", String),
)
c, o = customers.c, orders.c

CUSTOMERS = [
    {
        "id": f"C{i:02}",
        "region": "EU" if i % 3 else "US",
        "tier": None if i % 10 == 0 else i % 4,
        "referrer": None if i % 4 else f"C{(i * 3) % 70:02}",
    }
    for i in range(70)
]
ORDERS = [
    {
        "id": i,
        "customer_id": None if i % 13 == 0 else f"C{(i * 7) % 80:02}",  # some customers do not exist
        "total": None if i % 11 == 0 else (i * 37) % 100,
        "status": "open" if i % 4 else "closed",
    }
    for i in range(90)
]
SCAN = {"dynamodb_scan": "allow"}


@pytest.fixture(scope="module")
def databases(engine: Engine) -> Iterator[tuple[Engine, Engine]]:
    yield from filled_alike(engine, metadata, {customers: CUSTOMERS, orders: ORDERS})


def _same(databases: tuple[Engine, Engine], statement: Any) -> list[tuple]:
    return same_rows(databases, statement, **SCAN)


open_orders = select(o.customer_id).where(o.status == "open")
SEMI_JOINS = {
    "IN, outer keyed by its whole key": select(c.id, c.tier).where(c.id.in_(open_orders)).order_by(c.id),
    "IN, outer scanned and tested": select(c.id).where(c.tier.in_(select(o.total))).order_by(c.id),
    "IN on an index's partition key": select(o.id, o.total)
    .where(o.customer_id.in_(select(c.id).where(c.region == "US")))
    .order_by(o.id),
    "IN beside the outer's own WHERE, LIMIT": select(c.id)
    .where(c.region == "EU", c.id.in_(open_orders))
    .order_by(c.id.desc())
    .limit(5),
    "IN of a grouped subquery": select(c.id)
    .where(c.id.in_(select(o.customer_id).group_by(o.customer_id).having(func.count() > 1)))
    .order_by(c.id),
    "NOT IN, a NULL in the subquery: no rows": select(c.id)
    .where(c.id.not_in(select(o.customer_id)))
    .order_by(c.id),
    "NOT IN, no NULL": select(c.id)
    .where(~c.id.in_(select(o.customer_id).where(o.customer_id.is_not(None))))
    .order_by(c.id),
    "NOT IN an empty subquery: every row, NULL too": select(c.id, c.tier)
    .where(c.tier.not_in(select(o.total).where(o.status == "none")))
    .order_by(c.id),
    "NOT IN, a NULL outer value": select(c.id, c.tier)
    .where(c.tier.not_in(select(o.total).where(o.total.is_not(None), o.total < 2)))
    .order_by(c.id),
    "EXISTS, correlated": select(c.id)
    .where(exists().where(o.customer_id == c.id, o.total > 50))
    .order_by(c.id),
    "NOT EXISTS, correlated": select(c.id).where(~exists().where(o.customer_id == c.id)).order_by(c.id),
    "NOT EXISTS on a NULL column": select(o.id)
    .where(~exists().where(c.id == o.customer_id, c.region == "US"))
    .order_by(o.id),
    "EXISTS, uncorrelated and true": select(c.id)
    .where(exists(select(o.id).where(o.status == "open")))
    .order_by(c.id),
    "EXISTS, uncorrelated and false": select(c.id).where(exists(select(o.id).where(o.status == "none"))),
    "a self-referential EXISTS by an alias": select(c.id)
    .where(exists().where((ref := customers.alias("ref")).c.id == c.referrer, ref.c.region == "EU"))
    .order_by(c.id),
    "IN and a join": select(o.id, c.region)
    .join_from(orders, customers, c.id == o.customer_id)
    .where(o.customer_id.in_(select(c.id).where(c.tier == 1)))
    .order_by(o.id),
    "COUNT over an IN": select(func.count()).where(c.id.in_(open_orders)),
    "COUNT over an IN that matches none": select(func.count()).where(
        c.id.in_(select(o.customer_id).where(o.id < 0))
    ),
}


@pytest.mark.parametrize("statement", list(SEMI_JOINS.values()), ids=list(SEMI_JOINS))
def test_semi_joins_like_sqlite(databases, statement):
    _same(databases, statement)


def test_the_null_cases_are_the_ones_asked(databases):
    """The NULL cases above are not vacuous: SQLite's own rows."""
    sqlite = databases[1]
    assert rows_of(sqlite, SEMI_JOINS["NOT IN, a NULL in the subquery: no rows"]) == []
    assert (None,) in [
        row[1:] for row in rows_of(sqlite, SEMI_JOINS["NOT IN an empty subquery: every row, NULL too"])
    ]
    assert len(rows_of(sqlite, SEMI_JOINS["NOT IN an empty subquery: every row, NULL too"])) == 70
    assert None not in [row[1] for row in rows_of(sqlite, SEMI_JOINS["NOT IN, a NULL outer value"])]
    assert 0 in [row[0] for row in rows_of(sqlite, SEMI_JOINS["NOT EXISTS on a NULL column"])]


def test_the_steps_are_the_subquery_then_the_outer_read():
    compiled = SEMI_JOINS["IN on an index's partition key"].compile(dialect=DynamoDBDialect())
    assert compiled.string == (
        f'SELECT "id" FROM "{customers.name}" WHERE "region" = ?;\n'
        f'SELECT "id", "total", "customer_id" FROM "{orders.name}"."ix_{orders.name}_customer_id" '
        'WHERE "customer_id" IN [?, ...]'
    )
    plan = compiled.record.plan
    assert [(s.operation, s.index) for s in plan.steps] == [
        ("Scan", None),
        ("Query", f"ix_{orders.name}_customer_id"),
    ]
    assert plan.steps[1].reason == (
        f"{orders.name} fetched on index ix_{orders.name}_customer_id for the values the subquery read"
    )
    assert plan.client.startswith("IN (the subquery's rows); ORDER BY; ")
    scanned = SEMI_JOINS["NOT EXISTS, correlated"].compile(dialect=DynamoDBDialect())
    assert (
        scanned.string == f'SELECT "customer_id" FROM "{orders.name}";\nSELECT "id" FROM "{customers.name}"'
    )


def test_explain_shows_every_step(databases):
    text = str(sa_dynamo.explain(databases[0], SEMI_JOINS["EXISTS, correlated"]))
    assert "step 1:\n  operation:     Scan\n" in text
    assert "the subquery of EXISTS 1, read once" in text
    assert f'  PartiQL:       SELECT "id" FROM "{customers.name}" WHERE "id" IN [?, ...]' in text
    assert "on the client: EXISTS (the subquery's rows); ORDER BY; " in text


def test_the_outer_rows_by_index_go_50_an_in(databases):
    """60 customers read by the subquery: their orders by the customer_id index, 50 and 10."""
    statement = select(o.id).where(o.customer_id.in_(select(c.id).where(c.id < "C60")))
    with databases[0].connect() as conn, requests_built(conn) as sent:
        rows = conn.execute(statement.execution_options(**SCAN)).all()
    assert sorted(rows) == sorted(rows_of(databases[1], statement))
    assert [operation for operation, _ in sent] == ["ExecuteStatement"] * 3
    assert [body["Statement"].count("?") for _, body in sent[1:]] == [50, 10]


def test_an_empty_subquery_fetches_nothing(databases):
    statement = select(o.id).where(o.customer_id.in_(select(c.id).where(c.region == "nowhere")))
    with databases[0].connect() as conn, requests_built(conn) as sent:
        assert conn.execute(statement.execution_options(**SCAN)).all() == []
    assert len(sent) == 1  # the subquery's scan, and no fetch


def test_each_read_obeys_the_scan_policy(databases):
    with (
        databases[0].connect() as conn,
        pytest.raises(ScanNotAllowed, match=f"scans the whole table '{orders.name}'"),
    ):
        conn.execute(select(c.id).where(c.id.in_(open_orders)).execution_options(dynamodb_scan="error"))


@pytest.mark.parametrize(
    ("statement", "construct"),
    [
        (select(c.id).where(or_(c.id.in_(open_orders), c.tier == 1)), "a subquery other than a top-level IN"),
        (select(c.id).where(tuple_(c.id, c.region).in_(select(o.customer_id, o.status))), "a tuple IN"),
        (select(c.id).where(exists().where(o.customer_id > c.id)), "EXISTS correlated by"),
    ],
    ids=["under OR", "tuple IN", "correlated by >"],
)
def test_what_cannot_be_computed_exactly_is_refused(statement, construct):
    with pytest.raises(CompileError, match=f"cannot express {construct}"):
        statement.compile(dialect=DynamoDBDialect())


def test_a_transaction_reads_its_own_writes(databases):
    statement = select(c.id).where(c.id.in_(select(o.customer_id).where(o.status == "rush"))).order_by(c.id)
    with databases[0].connect() as conn:
        conn.execute(orders.insert(), [{"id": 1000, "customer_id": "C05", "status": "rush"}])
        conn.execute(orders.insert(), [{"id": 1001, "customer_id": "C07", "status": "rush"}])
        assert conn.execute(statement.execution_options(**SCAN)).all() == [("C05",), ("C07",)]
        conn.execute(delete(orders).where(o.id == 1001))
        assert conn.execute(statement.execution_options(**SCAN)).all() == [("C05",)]
        conn.rollback()
        assert conn.execute(statement.execution_options(**SCAN)).all() == []


@pytest.mark.parametrize("autocommit", [False, True], ids=["in a transaction", "autocommit"])
def test_update_and_delete_where_in_a_subquery(engine, autocommit):
    """The read of the keys is the semi-join; the rowcount and the table are SQLite's."""
    local = MetaData()
    people, bought = (
        Table(
            f"{table.name}_w{uuid.uuid4().hex[:4]}",
            local,
            *(Column(x.name, x.type, primary_key=x.primary_key, index=x.index) for x in table.columns),
        )
        for table in (customers, orders)
    )
    contents = {people: CUSTOMERS, bought: ORDERS}
    for dynamodb, sqlite in filled_alike(engine, local, contents):
        level = "AUTOCOMMIT" if autocommit else "SERIALIZABLE"
        counts = []
        for each in (dynamodb, sqlite):
            with each.connect().execution_options(isolation_level=level, **SCAN) as conn:
                first = conn.execute(
                    update(people)
                    .where(people.c.id.in_(select(bought.c.customer_id).where(bought.c.total > 60)))
                    .values(region="VIP")
                )
                second = conn.execute(
                    delete(bought).where(~exists().where(people.c.id == bought.c.customer_id))
                )
                counts.append((first.rowcount, second.rowcount))
                if not autocommit:
                    conn.commit()
        assert counts[0] == counts[1]
        assert counts[0][0] > 3 and counts[0][1] > 3
        for table in (people, bought):
            statement = select(table).order_by(table.c.id)
            sorted_scan = dynamodb.execution_options(dynamodb_client_sort=1000, **SCAN)
            assert rows_of(sorted_scan, statement) == rows_of(sqlite, statement)


def test_more_than_50_whole_keys_cost_ceil_n_over_100_batch_gets(databases):
    """Customers by their whole key (a table without a sort key), more than an IN takes:
    BatchGetItem, 100 keys a request."""
    statement = select(c.id).where(c.id.in_(select(o.customer_id)))
    wanted = {row["customer_id"] for row in ORDERS if row["customer_id"]}
    assert len(wanted) > 50
    with databases[0].connect() as conn, requests_built(conn) as sent:
        rows = conn.execute(statement.execution_options(**SCAN)).all()
    assert len(rows) == len({x for x in wanted if x < "C70"})
    batches = [
        body["RequestItems"][customers.name]["Keys"]
        for operation, body in sent
        if operation == "BatchGetItem"
    ]
    assert len(batches) == math.ceil(len(wanted) / 100)
    assert sum(len(keys) for keys in batches) == len(wanted)
