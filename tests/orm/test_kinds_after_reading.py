"""While the CapacityWarning is on, an ORM read's discriminator filter (``"$type" IN [...]``) is
applied by the driver after reading instead of by DynamoDB, so that the driver can count the
items of other kinds it reads. The rows must not change: the same statements with the warning
on and off give the same rows on DynamoDB Local (and SQLite's, where SQLite filters the kinds
too), over a partition holding mapped kinds, kinds no class maps, and items whose
discriminator is missing, NULL or a number."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine, event, func, insert, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import sa_dynamo

WARNING = {"dynamodb_capacity_warning": 1000}  # on, and never reached: no warning in these tests


class Models:
    def __init__(self, table_name: str):
        class Base(DeclarativeBase):
            pass

        class Item(sa_dynamo.SingleTable, Base):
            __tablename__ = table_name
            pk: Mapped[str] = mapped_column(primary_key=True)
            sk: Mapped[str] = mapped_column(primary_key=True)

        class Order(Item):
            pass

        class Refund(Order):
            pass

        class Customer(Item):
            pass

        self.Base, self.Item, self.Order, self.Refund, self.Customer = Base, Item, Order, Refund, Customer


MAPPED = [
    ("C#1", "A#0", "Item"),
    ("C#1", "CUSTOMER", "Customer"),
    ("C#1", "ORDER#1", "Order"),
    ("C#1", "ORDER#2", "Order"),
    ("C#1", "ORDER#3", "Refund"),
    ("C#2", "ORDER#1", "Order"),
    *[("C#1", f"INVOICE#{n}", "Invoice") for n in range(3)],  # a kind no class maps
]
# discriminators a filter never matches: missing, NULL, a number
ODD = [
    {"pk": {"S": "C#1"}, "sk": {"S": "ORDER#4"}},
    {"pk": {"S": "C#1"}, "sk": {"S": "ORDER#5"}, "$type": {"NULL": True}},
    {"pk": {"S": "C#1"}, "sk": {"S": "ORDER#6"}, "$type": {"N": "7"}},
]


@pytest.fixture
def models(engine: Any, raw: Any, table_name: str) -> Iterator[Models]:
    models = Models(table_name)
    models.Base.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(insert(models.Item.__table__), [{"pk": p, "sk": s, "$type": t} for p, s, t in MAPPED])
    for item in ODD:
        raw.put_item(TableName=table_name, Item=item)
    yield models
    models.Base.metadata.drop_all(engine)


@pytest.fixture
def sqlite(models: Models) -> Iterator[Any]:
    """The same rows in SQLite (the discriminator is NOT NULL there: the missing and NULL ones
    are an empty string, the number is text; none names a kind)."""
    engine = create_engine("sqlite://")
    models.Base.metadata.create_all(engine)
    odd = [{"pk": i["pk"]["S"], "sk": i["sk"]["S"], "$type": i.get("$type", {}).get("N", "")} for i in ODD]
    with engine.begin() as conn:
        conn.execute(
            insert(models.Item.__table__), [{"pk": p, "sk": s, "$type": t} for p, s, t in MAPPED] + odd
        )
    yield engine
    engine.dispose()


def rows(bind: Any, statement: Any, **options: Any) -> list[tuple]:
    with Session(bind) as session:
        found = session.execute(statement.execution_options(**options)).all()
    return sorted(tuple(_plain(v) for v in row) for row in found)


def _plain(value: Any) -> Any:
    return (type(value).__name__, value.pk, value.sk) if hasattr(value, "sk") else value


SUBCLASS_READS: list[Callable[[Models], Any]] = [
    lambda m: select(m.Order).where(m.Order.pk == "C#1"),
    lambda m: select(m.Refund).where(m.Refund.pk == "C#1"),
    lambda m: select(m.Customer).where(m.Customer.pk == "C#1", m.Customer.sk == "CUSTOMER"),
    lambda m: select(m.Order).where(m.Order.pk == "C#1", m.Order.sk >= "I"),
    lambda m: select(m.Order).where(m.Order.pk == "C#1").order_by(m.Order.sk.desc()).limit(2),
    lambda m: select(m.Order).where(m.Order.pk == "C#1").limit(1),
    lambda m: select(m.Order).execution_options(dynamodb_scan="allow"),
    lambda m: select(m.Order).where(m.Order.pk.in_(["C#1", "C#2"])),
    lambda m: select(m.Order.sk).where(m.Order.pk == "C#1"),
    lambda m: select(func.count()).select_from(m.Order).where(m.Order.pk == "C#1"),
    lambda m: select(func.count(m.Order.type_)).where(m.Order.pk == "C#1"),
    lambda m: (
        select(m.Order)
        .where(m.Order.pk == "C#1")
        .order_by(m.Order.sk)
        .offset(1)
        .execution_options(dynamodb_client_sort=100)
    ),
]
BASE_READS: list[Callable[[Models], Any]] = [
    lambda m: select(m.Item).where(m.Item.pk == "C#1"),
    lambda m: select(m.Item).where(m.Item.pk == "C#1", m.Item.sk < "D"),
    lambda m: select(m.Item).where(m.Item.pk == "C#1").limit(3),
    lambda m: select(m.Item).where(m.Item.pk == "C#1", m.Item.type_.in_(["Order", "Invoice"])),
]


@pytest.mark.parametrize("read", range(len(SUBCLASS_READS)))
def test_a_subclass_read_gives_the_same_rows_with_the_warning_on_off_and_on_sqlite(
    engine: Any, models: Models, sqlite: Any, read: int
) -> None:
    statement = SUBCLASS_READS[read](models)
    expected = rows(sqlite, statement)
    assert expected  # each read finds rows
    assert rows(engine, statement) == expected
    assert rows(engine, statement, **WARNING) == expected


@pytest.mark.parametrize("read", range(len(BASE_READS)))
def test_a_base_class_read_gives_the_same_rows_with_the_warning_on_and_off(
    engine: Any, models: Models, read: int
) -> None:
    statement = BASE_READS[read](models)
    expected = rows(engine, statement)
    assert expected
    assert rows(engine, statement, **WARNING) == expected


def test_the_rows_of_the_whole_partition_are_the_mapped_kinds_only(engine: Any, models: Models) -> None:
    """What the equalities above compare: no unmapped kind, no odd discriminator, comes back."""
    Item = models.Item
    assert [r[0] for r in rows(engine, select(Item).where(Item.pk == "C#1"), **WARNING)] == [
        ("Customer", "C#1", "CUSTOMER"),
        ("Item", "C#1", "A#0"),
        ("Order", "C#1", "ORDER#1"),
        ("Order", "C#1", "ORDER#2"),
        ("Refund", "C#1", "ORDER#3"),
    ]


def test_a_get_of_an_item_of_another_kind_is_none_either_way(engine: Any, models: Models) -> None:
    for options in ({}, WARNING):
        with Session(engine) as session:
            statement = select(models.Order).where(models.Order.pk == "C#1", models.Order.sk == "INVOICE#0")
            assert session.scalars(statement.execution_options(**options)).all() == []
            assert session.get(models.Order, ("C#1", "A#0"), execution_options=options) is None


def test_a_transaction_s_own_writes_are_filtered_by_kind_too(engine: Any, models: Models) -> None:
    Order, Customer = models.Order, models.Customer
    found = []
    for options in ({}, WARNING):
        with Session(engine) as session:
            session.add_all([Order(pk="C#1", sk="ORDER#9"), Customer(pk="C#1", sk="ORDER#8")])
            session.flush()  # held in the transaction, laid over what is read
            statement = select(Order).where(Order.pk == "C#1").execution_options(**options)
            found.append(sorted(o.sk for o in session.scalars(statement)))
            session.rollback()
    assert found == [["ORDER#1", "ORDER#2", "ORDER#3", "ORDER#9"]] * 2


def test_paginate_gives_the_same_pages_either_way(engine: Any, models: Models) -> None:
    Order = models.Order
    pages = []
    for options in ({}, WARNING):
        keys, after = [], None
        with Session(engine) as session:
            while True:
                statement = select(Order).where(Order.pk == "C#1").execution_options(**options)
                page = sa_dynamo.paginate(session, statement, page_size=2, after=after)
                keys.append([o.sk for o in page.rows])
                after = page.next
                if after is None:
                    break
        pages.append(keys)
    assert pages[0] == pages[1]
    assert [key for page in pages[0] for key in page] == ["ORDER#1", "ORDER#2", "ORDER#3"]


@pytest.fixture
def sent_by(endpoint_url: str) -> Iterator[Callable[..., tuple[Any, list[str]]]]:
    """An engine with ``options`` and the PartiQL it sends."""
    engines = []

    def make(**options: Any) -> tuple[Any, list[str]]:
        engine = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", **options)
        statements: list[str] = []
        event.listen(engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
        engines.append(engine)
        return engine, statements

    yield make
    for engine in engines:
        engine.dispose()


def test_the_partiql_sent_leaves_the_kinds_out_only_while_the_warning_is_on(
    sent_by: Callable[..., tuple[Any, list[str]]], models: Models, table_name: str
) -> None:
    Order, Item = models.Order, models.Item
    off, off_sent = sent_by()
    on, on_sent = sent_by(dynamodb_capacity_warning=1000)
    for statement in (
        select(Order).where(Order.pk == "C#1"),
        select(Item).where(Item.pk == "C#1"),
        select(func.count()).select_from(Order).where(Order.pk == "C#1"),
    ):
        rows(off, statement)
        rows(on, statement)
    assert off_sent == [
        f'SELECT "pk", "sk", "$type" FROM "{table_name}" WHERE "pk" = ? AND ("$type" IN [?, ?])',
        f'SELECT "pk", "sk", "$type" FROM "{table_name}" WHERE "pk" = ? AND ("$type" IN [?, ?, ?, ?])',
        f'SELECT "pk" FROM "{table_name}" WHERE "pk" = ? AND ("$type" IN [?, ?])',
    ]
    assert on_sent == [
        f'SELECT "pk", "sk", "$type" FROM "{table_name}" WHERE "pk" = ?',
        f'SELECT "pk", "sk", "$type" FROM "{table_name}" WHERE "pk" = ?',
        # a COUNT is DynamoDB's to filter: the driver counts items it does not look at
        f'SELECT "pk" FROM "{table_name}" WHERE "pk" = ? AND ("$type" IN [?, ?])',
    ]


def test_explain_shows_the_partiql_sent_and_the_driver_s_filter(
    sent_by: Callable[..., tuple[Any, list[str]]], models: Models, table_name: str
) -> None:
    on, _ = sent_by(dynamodb_capacity_warning=1000)
    Order = models.Order
    assert str(sa_dynamo.explain(on, select(Order).where(Order.pk == "C#1"))).splitlines() == [
        "operation:     Query",
        f"table:         {table_name}",
        "index:         -",
        'key condition: "pk" = ?',
        "filter:        -",
        'driver filter: "$type" IN [?, ?]',
        "after reading: DynamoDB reads, bills and returns every item the key condition matches, then the "
        "driver discards those the driver filter fails and counts them for the CapacityWarning "
        "(dynamodb_capacity_warning)",
        "discriminator: the filter on '$type' discards the other kinds' items after reading them. Pin the "
        "sort key to the wanted kind's items (a prefix, .startswith('ORDER#'), or a range), so that "
        "DynamoDB reads only them, or read an index whose key is '$type' (use_index())",
        f'PartiQL:       SELECT "pk", "sk", "$type" FROM "{table_name}" WHERE "pk" = ?',
    ]


def test_the_items_the_driver_s_filter_discards_are_counted_in_the_figures_and_the_line(
    engine: Any, models: Models, caplog: pytest.LogCaptureFixture
) -> None:
    Order = models.Order
    with caplog.at_level(logging.INFO, logger="sa_dynamo.dbapi"), Session(engine) as session:
        result = session.execute(select(Order).where(Order.pk == "C#1").execution_options(**WARNING))
        assert len(result.all()) == 3
    used = sa_dynamo.consumed(result)
    assert (used.items, used.rows, used.filtered, used.skipped) == (11, 3, 8, 0)
    assert [r.getMessage().split(": ", 1)[1].rsplit(", ", 1)[0] for r in caplog.records] == [
        "1 request, 11 items read, 3 rows, 8 discarded by the driver's filter, capacity not reported"
    ]


def test_the_execution_option_compiles_apart_from_the_same_statement_without_it(
    sent_by: Callable[..., tuple[Any, list[str]]], models: Models, table_name: str
) -> None:
    """One engine, one statement: the option is part of the statement's cache key."""
    engine, sent = sent_by()
    statement = select(models.Order).where(models.Order.pk == "C#1")
    for options in ({}, WARNING, {}):
        rows(engine, statement, **options)
    filtered = f'SELECT "pk", "sk", "$type" FROM "{table_name}" WHERE "pk" = ? AND ("$type" IN [?, ?])'
    assert sent == [filtered, f'SELECT "pk", "sk", "$type" FROM "{table_name}" WHERE "pk" = ?', filtered]
