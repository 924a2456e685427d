"""sa_dynamo's own tables, the guard table of a table's unique constraints and the counters of
autoincrement ids, are never taken for the user's: the driver's table list, inspect() and
Alembic's autogenerate leave them out alike, with both stored beside the model's table."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, create_engine, inspect
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from sa_dynamo.check import check
from sa_dynamo.dbapi import control_plane
from sa_dynamo.dbapi.counters import COUNTERS_TABLE
from sa_dynamo.dbapi.guard_names import guard_table


class Base(DeclarativeBase):
    pass


class Member(Base):
    """An autoincrement id (the counters' table) and a unique column (a guard table)."""

    __tablename__ = f"own_member_{uuid.uuid4().hex[:8]}"
    id: Mapped[int] = mapped_column(primary_key=True)
    email: Mapped[str] = mapped_column(unique=True)


GUARDS = guard_table(Member.__tablename__)
MINE = {Member.__tablename__, GUARDS, COUNTERS_TABLE}


@pytest.fixture
def engine(endpoint_url: str) -> Iterator[Engine]:
    engine = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}")
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add(Member(email="a@example.com"))
        session.commit()
    yield engine
    Base.metadata.drop_all(engine)
    engine.dispose()


def test_both_own_tables_are_stored_and_none_is_listed(engine, raw):
    stored = set(raw.list_tables()["TableNames"])
    assert stored >= MINE  # both of sa_dynamo's tables exist beside the model's
    with engine.connect() as conn:
        listed = control_plane.list_tables(conn.connection.dbapi_connection.transport)
        reflected = inspect(conn).get_table_names()
        assert check(Base, conn) == []
        # other tests' tables on the shared server are not this test's business; these three are
        only_mine = {"include_name": lambda name, kind, _: kind != "table" or name in MINE}
        assert compare_metadata(MigrationContext.configure(conn, opts=only_mine), Base.metadata) == []
    for names in (listed, reflected):
        assert set(names) & MINE == {Member.__tablename__}
    assert reflected == listed
