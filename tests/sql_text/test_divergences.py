"""What SQL text once did differently from the same select(), now one translator: each of these
ran on DynamoDB Local with the rows checked (the operator limit and a repeated partition key are
in test_parity.py and tests/test_text_sql.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Column, Index, Integer, MetaData, String, Table, select, text

import sa_dynamo
from sa_dynamo import cli


@pytest.fixture
def orders(engine, table_name) -> Iterator[Table]:
    metadata = MetaData()
    table = Table(
        table_name,
        metadata,
        Column("customer", String, primary_key=True),
        Column("order_id", String, primary_key=True),
        Column("status", String),
        Column("n", Integer),
        Index("by_status", "status"),
    )
    metadata.create_all(engine)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(
            table.insert(),
            [
                {
                    "customer": f"C#{i % 2}",
                    "order_id": f"O#{i}",
                    "status": "OPEN" if i < 3 else "DONE",
                    "n": i,
                }
                for i in range(6)
            ],
        )
    yield table
    metadata.drop_all(engine)


def test_text_reads_the_index_select_reads(engine, orders, endpoint_url, capsys):
    sql = f"SELECT order_id FROM {orders.name} WHERE status = :s"
    core = select(orders.c.order_id).where(orders.c.status == "OPEN")
    with engine.connect().execution_options(dynamodb_scan="error") as conn:  # a scan would raise
        rows = conn.execute(text(sql), {"s": "OPEN"}).all()
        assert sorted(rows) == sorted(conn.execute(core).all()) == [("O#0",), ("O#1",), ("O#2",)]
    plan = sa_dynamo.explain(engine, text(sql).bindparams(s="OPEN"))
    assert (
        (plan.operation, plan.index)
        == ("Query", "by_status")
        == (
            sa_dynamo.explain(engine, core).operation,
            sa_dynamo.explain(engine, core).index,
        )
    )
    url = f"dynamodb://{endpoint_url.removeprefix('http://')}"
    assert cli.main(["explain", url, f"SELECT order_id FROM {orders.name} WHERE status = 'OPEN'"]) == 0
    out = capsys.readouterr().out
    assert "operation:     Query" in out and "index:         by_status" in out


def test_text_orders_descending_without_the_partition_key_selected(engine, orders, sent):
    """DynamoDB Local fails ORDER BY ... DESC unless the partition key is projected: the compiler
    reads it without returning it, for text as for select()."""
    with engine.connect() as conn:
        rows = conn.execute(
            text(f"SELECT order_id FROM {orders.name} WHERE customer = :c ORDER BY order_id DESC"),
            {"c": "C#1"},
        ).all()
    assert rows == [("O#5",), ("O#3",), ("O#1",)]
    assert sent == [
        f'SELECT "order_id", "customer" FROM "{orders.name}" WHERE "customer" = ? ORDER BY "order_id" DESC'
    ]


@pytest.mark.parametrize("form", ["core", "text"])
def test_an_update_with_an_in_list_and_a_removed_attribute_runs(engine, orders, form):
    """The UPDATE template is finished over the statement with its IN list expanded."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        if form == "core":
            statement = (
                orders.update()
                .where(orders.c.customer == "C#0", orders.c.order_id == "O#0", orders.c.n.in_([0, 7]))
                .values(status=None, n=10)
            )
            result = conn.execute(statement)
        else:
            result = conn.execute(
                text(
                    f"UPDATE {orders.name} SET status = NULL, n = 10 "
                    "WHERE customer = 'C#0' AND order_id = 'O#0' AND n IN (0, 7)"
                )
            )
        assert result.rowcount == 1
        row = conn.execute(
            select(orders.c.status, orders.c.n).where(orders.c.customer == "C#0", orders.c.order_id == "O#0")
        ).one()
    assert tuple(row) == (None, 10)
