"""CapacityWarning (``dynamodb_capacity_warning=N``): a read that hands out far fewer rows than
the items DynamoDB returned for it warns at the caller's line, naming what dropped them and the
access pattern that would not read them. Off by default. On DynamoDB Local, over one partition
holding two orders and eight items of a kind no class maps."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import ForeignKey, create_engine, event, func, insert, select
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship, selectinload

import sa_dynamo
from sa_dynamo.exc import CapacityWarning

UNFILTERED = {"dynamodb_discriminator_filter": False}  # the kinds are sorted out on the client


@pytest.fixture
def models(engine: Any, table_name: str) -> Iterator[Any]:
    class Base(DeclarativeBase):
        pass

    class Item(sa_dynamo.SingleTable, Base):
        __tablename__ = table_name
        pk: Mapped[str] = mapped_column(primary_key=True)
        sk: Mapped[str] = mapped_column(primary_key=True)

    class Order(Item):
        pass

    Base.metadata.create_all(engine)
    with engine.begin() as conn:
        rows = [{"pk": "C#1", "sk": f"ORDER#{n}", "type_": "Order"} for n in range(2)]
        rows += [{"pk": "C#1", "sk": f"INVOICE#{n}", "type_": "Invoice"} for n in range(8)]
        conn.execute(
            insert(Item.__table__), [{"pk": r["pk"], "sk": r["sk"], "$type": r["type_"]} for r in rows]
        )
    yield Item, Order
    Base.metadata.drop_all(engine)


@pytest.fixture
def warning_engine(endpoint_url: str) -> Iterator[Any]:
    engine = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", dynamodb_capacity_warning=3)
    yield engine
    engine.dispose()


def read(engine: Any, statement: Any) -> tuple[list[str], list[warnings.WarningMessage]]:
    with Session(engine) as session, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        keys = [item.sk for item in session.scalars(statement)]
    return keys, [w for w in caught if issubclass(w.category, CapacityWarning)]


def test_a_kind_only_read_of_a_mixed_partition_warns_at_the_caller_s_line(
    warning_engine: Any, models: Any, table_name: str
) -> None:
    Item, _ = models
    keys, caught = read(warning_engine, select(Item).where(Item.pk == "C#1").execution_options(**UNFILTERED))
    assert keys == ["ORDER#0", "ORDER#1"]
    assert [str(w.message) for w in caught] == [
        f"this read of {table_name} handed out 2 rows of the 10 items DynamoDB returned in 1 request, "
        "and billed: 8 were of kinds no mapped class loads, dropped on the client by their "
        "discriminator '$type'. Pin the sort key to the wanted kind's items (a prefix, "
        ".startswith('ORDER#'), or a range), so that DynamoDB reads only them, or read an index "
        "whose key is '$type' (use_index()) (DynamoDB's own discriminator filter, "
        "dynamodb_discriminator_filter, returns fewer of them but reads and bills them all)"
    ]
    assert caught[0].filename == __file__


def test_a_sort_key_prefix_read_of_the_same_rows_is_silent(warning_engine: Any, models: Any) -> None:
    Item, _ = models
    statement = select(Item).where(Item.pk == "C#1", Item.sk.startswith("ORDER#"))
    assert read(warning_engine, statement.execution_options(**UNFILTERED)) == (["ORDER#0", "ORDER#1"], [])


def test_the_warning_is_off_by_default_and_an_execution_option_turns_it_on(engine: Any, models: Any) -> None:
    Item, _ = models
    statement = select(Item).where(Item.pk == "C#1").execution_options(**UNFILTERED)
    assert read(engine, statement) == (["ORDER#0", "ORDER#1"], [])
    assert len(read(engine, statement.execution_options(dynamodb_capacity_warning=5))[1]) == 1  # 10 to 2
    assert read(engine, statement.execution_options(dynamodb_capacity_warning=5.5))[1] == []


def test_an_offset_is_advised_to_page_with_resume_tokens(
    warning_engine: Any, models: Any, table_name: str
) -> None:
    Item, _ = models
    statement = select(Item).where(Item.pk == "C#1", Item.sk.startswith("INVOICE#")).order_by(Item.sk)
    keys, caught = read(
        warning_engine,
        statement.offset(6).execution_options(
            **UNFILTERED, dynamodb_client_sort=100, dynamodb_unknown_type="base"
        ),
    )
    assert keys == ["INVOICE#6", "INVOICE#7"]
    assert [str(w.message) for w in caught] == [
        f"this read of {table_name} handed out 2 rows of the 8 items DynamoDB returned in 1 request, "
        "and billed: OFFSET 6 read its rows and dropped them. Page with sa_dynamo.paginate() instead: "
        "its resume token starts the next page where the last one ended"
    ]


def test_a_count_reads_what_it_counts_and_never_warns(warning_engine: Any, models: Any) -> None:
    table = models[0].__table__
    with warning_engine.connect() as conn, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        counted = conn.execute(select(func.count()).select_from(table).where(table.c.pk == "C#1")).all()
    assert counted == [(10,)]
    assert [w for w in caught if issubclass(w.category, CapacityWarning)] == []


def test_the_cause_that_dropped_the_most_items_is_named(
    warning_engine: Any, models: Any, table_name: str
) -> None:
    """One item of a kind no class maps, then nine orders of which the LIMIT hands out one: the
    advice is the LIMIT's, not the discriminator's."""
    Item, _ = models
    rows = [{"pk": "C#2", "sk": "INVOICE#0", "$type": "Invoice"}]
    rows += [{"pk": "C#2", "sk": f"ORDER#{n}", "$type": "Order"} for n in range(9)]
    with warning_engine.begin() as conn:
        conn.execute(insert(Item.__table__), rows)
    keys, caught = read(
        warning_engine, select(Item).where(Item.pk == "C#2").limit(1).execution_options(**UNFILTERED)
    )
    assert keys == ["ORDER#0"]
    assert [str(w.message) for w in caught] == [
        f"this read of {table_name} handed out 1 rows of the 10 items DynamoDB returned in 1 request, "
        "and billed: the LIMIT 1 ended within a page. Pass dynamodb_page_size near the LIMIT, so that "
        "each request reads fewer items"
    ]


def test_a_subclass_read_warns_of_the_kinds_its_discriminator_filter_discards(
    warning_engine: Any, models: Any, table_name: str
) -> None:
    """A PartiQL answer carries no count of the items DynamoDB's own filter discards: while the
    warning is on, the driver applies the discriminator filter itself (test_kinds_after_reading.py)."""
    _, Order = models
    keys, caught = read(warning_engine, select(Order).where(Order.pk == "C#1"))
    assert keys == ["ORDER#0", "ORDER#1"]
    assert [str(w.message) for w in caught] == [
        f"this read of {table_name} handed out 2 rows of the 10 items DynamoDB returned in 1 request, "
        'and billed: 8 were of other kinds, discarded by the driver\'s filter "$type" IN [?] (applied '
        "after reading while this warning is on; sent to DynamoDB, it reads and bills them all the "
        "same). Pin the sort key to the wanted kind's items (a prefix, .startswith('ORDER#'), or a "
        "range), so that DynamoDB reads only them, or read an index whose key is '$type' (use_index())"
    ]
    assert caught[0].filename == __file__
    prefixed = select(Order).where(Order.pk == "C#1", Order.sk.startswith("ORDER#"))
    assert read(warning_engine, prefixed) == (["ORDER#0", "ORDER#1"], [])


def test_a_threshold_below_one_is_refused(endpoint_url: str) -> None:
    with pytest.raises(
        ArgumentError, match=r"a number of 1 or more \(e\.g\. 10\), or None for no warning; not 0"
    ):
        create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", dynamodb_capacity_warning=0)


def test_with_hide_parameters_the_offset_is_not_named(
    endpoint_url: str, models: Any, table_name: str
) -> None:
    Item, _ = models
    hidden = create_engine(
        f"dynamodb://{endpoint_url.removeprefix('http://')}",
        dynamodb_capacity_warning=3,
        hide_parameters=True,
    )
    statement = select(Item).where(Item.pk == "C#1", Item.sk.startswith("INVOICE#")).order_by(Item.sk)
    options = {**UNFILTERED, "dynamodb_client_sort": 100, "dynamodb_unknown_type": "base"}
    try:
        _, caught = read(hidden, statement.offset(6).execution_options(**options))
    finally:
        hidden.dispose()
    assert [str(w.message) for w in caught] == [
        f"this read of {table_name} handed out 2 rows of the 8 items DynamoDB returned in 1 request, "
        "and billed: the OFFSET read its rows and dropped them. Page with sa_dynamo.paginate() instead: "
        "its resume token starts the next page where the last one ended"
    ]


def test_a_statement_s_own_option_wins_over_the_execute_call_s(
    engine: Any, models: Any, table_name: str
) -> None:
    """As for every dynamodb_* option: the ORM's choice of who applies the discriminator filter
    and the execution's warning read the option in the same order, so they agree."""
    _, Order = models
    statement = select(Order).where(Order.pk == "C#1")

    def read_with(own: Any, call: Any) -> tuple[list[str], list[str], list[str]]:
        sent: list[str] = []

        def record(conn: Any, cursor: Any, text: str, *args: Any) -> None:
            sent.append(text)

        event.listen(engine, "before_cursor_execute", record)
        try:
            with Session(engine) as session, warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                found = session.scalars(
                    statement.execution_options(dynamodb_capacity_warning=own),
                    execution_options={"dynamodb_capacity_warning": call},
                )
                keys = [item.sk for item in found]
        finally:
            event.remove(engine, "before_cursor_execute", record)
        return keys, [w.message.args[0][:60] for w in caught if w.category is CapacityWarning], sent

    keys, warned, sent = read_with(own=3, call=None)
    assert keys == ["ORDER#0", "ORDER#1"]
    assert warned == [f"this read of {table_name} handed out 2 rows of the 10 items "[:60]]
    assert '"$type" IN' not in sent[0]  # the driver applies the filter, and counts what it drops
    keys, warned, sent = read_with(own=None, call=3)
    assert (keys, warned) == (["ORDER#0", "ORDER#1"], [])
    assert '"$type" IN' in sent[0]


@pytest.fixture
def customers(engine: Any, table_name: str) -> Iterator[Any]:
    """A customer's orders as an item collection, each order's shipment in a table of its own
    (a relationship of a class of the single-table hierarchy)."""

    class Base(DeclarativeBase):
        pass

    class Shipment(Base):
        __tablename__ = f"{table_name}_shipments"
        id: Mapped[str] = mapped_column(primary_key=True)
        carrier: Mapped[str]

    class Item(sa_dynamo.SingleTable, Base):
        __tablename__ = table_name
        pk: Mapped[str] = mapped_column(primary_key=True)
        sk: Mapped[str] = mapped_column(primary_key=True)

    class Customer(Item):
        orders = sa_dynamo.item_collection("Order", sort_key_prefix="ORDER#", order_by="Order.sk")

    class Order(Item):
        shipment_id: Mapped[str | None] = mapped_column(ForeignKey(Shipment.id))
        shipment = relationship(Shipment)

    Base.metadata.create_all(engine)
    with Session(engine) as session, session.begin():
        session.add_all([Shipment(id="S1", carrier="post"), Customer(pk="C#1", sk="C#1")])
        session.add_all([Order(pk="C#1", sk=f"ORDER#{n}", shipment_id="S1") for n in range(2)])
    yield Customer, Order
    Base.metadata.drop_all(engine)
    Base.registry.dispose()


def test_selectinload_with_the_warning_on_loads_what_it_loads_with_it_off(
    engine: Any, customers: Any
) -> None:
    """The option that moves the discriminator filter to the driver rides on the statement, and
    the ORM's selectin loaders pass a cached statement's options on (the second execution)."""
    Customer, Order = customers
    loads = [
        (
            select(Customer).where(Customer.pk == "C#1").options(selectinload(Customer.orders)),
            lambda customer: [order.sk for order in customer.orders],
        ),
        (
            select(Order).where(Order.pk == "C#1").options(selectinload(Order.shipment)),
            lambda order: (order.sk, order.shipment.carrier),
        ),
    ]
    for statement, loaded in loads:
        rows = []
        for bind in (engine, *[engine.execution_options(dynamodb_capacity_warning=1000)] * 2):
            with Session(bind) as session:
                rows.append([loaded(parent) for parent in session.scalars(statement)])
        assert rows[0] == rows[1] == rows[2] and rows[0]
