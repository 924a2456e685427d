"""``sa_dynamo.consumed(result)``: the figures of a result's statement, from a Core or ORM
result and the scalar views of one, against the rows the result handed out."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Column, MetaData, String, Table, create_engine, insert, select
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import sa_dynamo


class Base(DeclarativeBase):
    pass


def test_a_core_result_s_figures_are_its_statement_s(engine: Any, items: Table) -> None:
    with engine.connect() as conn:
        conn.execute(insert(items), [{"pk": "c", "sk": str(n), "n": n % 3} for n in range(7)])
        conn.commit()
        result = conn.execute(select(items.c.sk).where(items.c.pk == "c", items.c.n == 1))
        assert result.scalars().all() == ["1", "4"]
    figures = sa_dynamo.consumed(result)
    assert (figures.operation, figures.source, figures.requests) == ("ExecuteStatement", items.name, 1)
    assert (figures.items, figures.rows, figures.skipped, figures.reported) == (2, 2, 0, False)


def test_an_orm_result_and_its_scalars_give_the_same_figures(engine: Any, table_name: str) -> None:
    class Reading(Base):
        __tablename__ = table_name
        pk: Mapped[str] = mapped_column(primary_key=True)
        sk: Mapped[str] = mapped_column(primary_key=True)

    Base.metadata.create_all(engine, tables=[Reading.__table__])
    try:
        with Session(engine) as session:
            session.add_all([Reading(pk="r", sk=str(n)) for n in range(3)])
            session.commit()
            result = session.execute(select(Reading).where(Reading.pk == "r"))
            scalars = result.scalars()
            assert [reading.sk for reading in scalars] == ["0", "1", "2"]
            assert sa_dynamo.consumed(scalars) is sa_dynamo.consumed(result)
            assert (sa_dynamo.consumed(result).items, sa_dynamo.consumed(result).rows) == (3, 3)
            assert sa_dynamo.consumed(session.scalars(select(Reading).where(Reading.pk == "none"))).rows == 0
    finally:
        Base.metadata.drop_all(engine, tables=[Reading.__table__])
        Base.registry.dispose()


def test_a_result_of_another_database_is_refused_with_advice() -> None:
    sqlite = create_engine("sqlite://")
    table = Table("t", MetaData(), Column("x", String))
    table.create(sqlite)
    with sqlite.connect() as conn, pytest.raises(ArgumentError, match=r"sa_dynamo.capacity\(\)"):
        sa_dynamo.consumed(conn.execute(select(table)))
