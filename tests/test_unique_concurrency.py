"""Eight writers, each on its own connection, insert the same unique value at once: exactly one
commits, every other gets IntegrityError and writes nothing (the guard item's INSERT decides,
inside DynamoDB, in the same transaction as the row). Bounded: one attempt per writer, the
threads wait for each other at a barrier with a timeout, and loopback only."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine, func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

WRITERS = 8
WAIT_SECONDS = 60


class Base(DeclarativeBase):
    pass


class Hero(Base):
    __tablename__ = f"uq_race_{uuid.uuid4().hex[:8]}"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(unique=True)


@pytest.fixture(scope="module")
def engine(endpoint_url: str) -> Iterator[Any]:
    engine = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", pool_size=WRITERS)
    Base.metadata.create_all(engine)
    yield engine
    Base.metadata.drop_all(engine)
    engine.dispose()


def race(write) -> list[str]:
    """Run ``write(writer)`` on WRITERS threads released together; each one's outcome."""
    barrier = threading.Barrier(WRITERS, timeout=WAIT_SECONDS)
    outcomes: list[str] = ["did not finish"] * WRITERS

    def writer(number: int) -> None:
        try:
            barrier.wait()
            write(number)
            outcomes[number] = "committed"
        except IntegrityError as error:
            outcomes[number] = "UNIQUE" if "UNIQUE constraint failed" in str(error.orig) else repr(error)
        except Exception as error:
            outcomes[number] = repr(error)

    threads = [threading.Thread(target=writer, args=(n,), daemon=True) for n in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_SECONDS)
    return outcomes


def count(engine: Any, name: str) -> int:
    with engine.connect().execution_options(dynamodb_scan="allow") as conn:
        return conn.scalar(select(func.count()).select_from(Hero).where(Hero.name == name))


def test_orm_writers_of_one_value(engine):
    def write(number: int) -> None:
        with Session(engine) as session:
            session.add(Hero(id=number, name="Same"))
            session.commit()

    outcomes = race(write)
    assert sorted(outcomes) == ["UNIQUE"] * (WRITERS - 1) + ["committed"], outcomes
    assert count(engine, "Same") == 1


def test_autocommit_writers_of_one_value(engine):
    def write(number: int) -> None:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(insert(Hero).values(id=100 + number, name="Also same"))

    outcomes = race(write)
    assert sorted(outcomes) == ["UNIQUE"] * (WRITERS - 1) + ["committed"], outcomes
    assert count(engine, "Also same") == 1
