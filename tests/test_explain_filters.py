"""explain() and ``sa-dynamo explain --models`` say which filter DynamoDB applies after reading:
the items it reads, bills and then discards, the discriminator filter's especially."""

from __future__ import annotations

import importlib
import sys
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, select

import sa_dynamo
from sa_dynamo import cli

NOWHERE = "dynamodb://127.0.0.1:9"  # explain() sends nothing: no server is needed

MODELS = """
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

import sa_dynamo


class Base(DeclarativeBase):
    pass


class Entry(sa_dynamo.SingleTable, Base):
    __tablename__ = "explain_filters_entries"
    pk: Mapped[str] = mapped_column(primary_key=True)
    sk: Mapped[str] = mapped_column(primary_key=True)
    total: Mapped[int | None]


class Order(Entry):
    pass


class Refund(Entry):
    pass
"""


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A models module, importable for the whole module (its classes are mapped once)."""
    directory = tmp_path_factory.mktemp("explain_filters")
    name = f"explain_filters_{uuid.uuid4().hex[:8]}"
    (directory / f"{name}.py").write_text(MODELS)
    sys.path.insert(0, str(directory))
    importlib.import_module(name)
    yield name
    sys.path.remove(str(directory))
    sys.modules.pop(name).Base.registry.dispose()


PARTITION_ADVICE = (
    "discriminator: the filter on '$type' discards the other kinds' items after reading them. Pin the "
    "sort key to the wanted kind's items (a prefix, .startswith('ORDER#'), or a range), so that DynamoDB "
    "reads only them, or read an index whose key is '$type' (use_index())"
)
AFTER_QUERY = (
    "after reading: DynamoDB reads and bills every item the key condition matches, then the filter "
    "discards those it fails"
)


def test_a_kind_read_of_a_partition_names_the_discriminator_filter(models: str) -> None:
    Order = sys.modules[models].Order
    plan = sa_dynamo.explain(create_engine(NOWHERE), select(Order).where(Order.pk == "C#1"))
    assert str(plan).splitlines()[3:7] == [
        'key condition: "pk" = ?',
        'filter:        "$type" IN [?]',
        AFTER_QUERY,
        PARTITION_ADVICE,
    ]


def test_a_read_that_pins_the_sort_key_too_is_advised_a_prefix_per_kind(models: str) -> None:
    Order = sys.modules[models].Order
    statement = select(Order).where(Order.pk == "C#1", Order.sk >= "O#")
    assert str(sa_dynamo.explain(create_engine(NOWHERE), statement)).splitlines()[5:7] == [
        AFTER_QUERY,
        "discriminator: the filter on '$type' discards the other kinds' items after reading them. Give "
        "each kind's items a sort-key prefix of their own and pin it, or read an index whose key is "
        "'$type' (use_index())",
    ]


def test_a_filter_on_another_attribute_is_read_then_discarded_and_no_filter_says_nothing() -> None:
    table = Table(
        "explain_filters_plain",
        MetaData(),
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
        Column("n", Integer),
    )
    engine = create_engine(NOWHERE)
    filtered = str(sa_dynamo.explain(engine, select(table.c.sk).where(table.c.pk == "p", table.c.n > 3)))
    assert filtered.splitlines()[4:6] == ['filter:        "n" > ?', AFTER_QUERY]
    scan = select(table.c.sk).where(table.c.n > 3).execution_options(dynamodb_scan="allow")
    assert str(sa_dynamo.explain(engine, scan)).splitlines()[5] == (
        "after reading: DynamoDB reads and bills every item, then the filter discards those it fails"
    )
    keyed = str(sa_dynamo.explain(engine, select(table.c.n).where(table.c.pk == "p", table.c.sk == "s")))
    assert "after reading" not in keyed and "discriminator" not in keyed


def test_explain_against_the_models_names_the_discriminator_filter(
    models: str, capsys: pytest.CaptureFixture[str]
) -> None:
    sql = "SELECT sk FROM explain_filters_entries WHERE pk = 'C#1' AND \"$type\" = 'Order'"
    assert cli.main(["explain", "--models", f"{models}:Base", sql]) == 0
    assert capsys.readouterr() == (
        "operation:     Query\n"
        "table:         explain_filters_entries\n"
        "index:         -\n"
        'key condition: "pk" = ?\n'
        'filter:        "$type" = ?\n'
        f"{AFTER_QUERY}\n"
        f"{PARTITION_ADVICE}\n"
        'PartiQL:       SELECT "sk" FROM "explain_filters_entries" WHERE "pk" = ? AND ("$type" = ?)\n',
        "",
    )
