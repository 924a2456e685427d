"""With create_engine(hide_parameters=True), no parameter value appears in what sa_dynamo and
SQLAlchemy write: exception messages, reprs, formatted tracebacks, DEBUG logs. Without it, a
value or key quoted in a message is cut to a short prefix."""

from __future__ import annotations

import logging
import traceback
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Float,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    create_engine,
    insert,
    select,
    update,
)
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import sa_dynamo
from sa_dynamo import StringSet

MARKER = "H1ddenMARKER"
DIGITS = "9021090210902109021090210902109021090210"  # 40 significant digits: refused


@pytest.fixture(scope="module")
def notes(endpoint_url: str) -> Iterator[Table]:
    table = Table(
        f"hidden_{uuid.uuid4().hex[:10]}",
        MetaData(),
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
        Column("n", Integer),
        Column("price", Numeric(10, 2)),
        Column("ratio", Float),
        Column("flag", Boolean),
        Column("doc", JSON),
        Column("tags", StringSet),
    )
    engine = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}")
    table.create(engine)
    with engine.begin() as conn:
        conn.execute(insert(table), {"pk": MARKER, "sk": "taken"})
    yield table
    table.drop(engine)
    engine.dispose()


def _engine(endpoint_url: str, hidden: bool) -> Engine:
    return create_engine(
        f"dynamodb://{endpoint_url.removeprefix('http://')}",
        hide_parameters=hidden,
        echo="debug",
        dynamodb_chunked_commit=True,
    )


def _begin(engine: Engine, *writes: Callable[[Any], None]) -> None:
    with engine.begin() as conn:
        for write in writes:
            write(conn)


def _autocommit(engine: Engine, write: Callable[[Any], None]) -> None:
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        write(conn)


def _row(t: Table, **values: Any) -> Callable[[Any], None]:
    return lambda conn: conn.execute(insert(t), {"pk": "p", "sk": uuid.uuid4().hex, **values})


def _taken(t: Table) -> Callable[[Any], None]:
    return lambda conn: conn.execute(insert(t), {"pk": MARKER, "sk": "taken"})


# name: what raises, given the engine and the table
ERROR_KINDS: dict[str, Callable[[Engine, Table], None]] = {
    "duplicate key, AUTOCOMMIT": lambda e, t: _autocommit(e, _taken(t)),
    "duplicate key, batch": lambda e, t: _autocommit(
        e, lambda c: c.execute(insert(t), [{"pk": MARKER, "sk": "taken"}])
    ),
    "duplicate key, commit": lambda e, t: _begin(e, _taken(t)),
    "duplicate key, one transaction": lambda e, t: _begin(e, _row(t, sk=MARKER), _row(t, sk=MARKER)),
    "duplicate key, chunked commit": lambda e, t: _begin(
        e,
        lambda c: c.execute(
            insert(t), [{"pk": "p", "sk": f"{i:03}"} for i in range(150)] + [{"pk": MARKER, "sk": "taken"}]
        ),
    ),
    "wrong type, Integer": lambda e, t: _begin(e, _row(t, n=MARKER)),
    "wrong type, Float": lambda e, t: _begin(e, _row(t, ratio=MARKER)),
    "wrong type, Boolean": lambda e, t: _begin(e, _row(t, flag=MARKER)),
    "wrong type, string set": lambda e, t: _begin(e, _row(t, tags={MARKER, 1})),
    "wrong type, key": lambda e, t: _begin(e, lambda c: c.execute(insert(t), {"pk": 1, "sk": MARKER * 2})),
    "oversize number": lambda e, t: _begin(e, _row(t, doc={"n": Decimal(DIGITS)})),
    "numeric overflow": lambda e, t: _begin(e, _row(t, price=Decimal(DIGITS[:12]))),
    "key too long": lambda e, t: _begin(e, lambda c: c.execute(insert(t), {"pk": MARKER * 200, "sk": "x"})),
    "item too large": lambda e, t: _begin(
        e, lambda c: c.execute(insert(t), {"pk": MARKER, "sk": "big", "doc": ["x" * 410_000]})
    ),
    "nested too deep": lambda e, t: _begin(
        e, _row(t, doc=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[MARKER]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]])
    ),
    "startswith pattern": lambda e, t: _autocommit(
        e, lambda c: c.execute(select(t.c.sk).where(t.c.pk == "p", t.c.sk.startswith(f"{MARKER}_x")))
    ),
    "LIKE pattern": lambda e, t: _autocommit(
        e, lambda c: c.execute(select(t.c.sk).where(t.c.pk == "p", t.c.sk.like(f"%{MARKER}")))
    ),
    "empty key in a document": lambda e, t: _autocommit(
        e, lambda c: c.execute(update(t).where(t.c.pk == "p", t.c.sk == "x").values(doc={"": MARKER}))
    ),
    "upsert": lambda e, t: _autocommit(
        e, lambda c: c.execute(sa_dynamo.upsert(t), [{"pk": MARKER * 200, "sk": "x"}])
    ),
}


def _everything_shown(error: BaseException) -> str:
    """An exception as a user can see it: message, repr, formatted traceback (causes included)."""
    return "\n".join([str(error), repr(error), "".join(traceback.format_exception(error))])


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    for name in ("sa_dynamo", "sqlalchemy"):
        caplog.set_level(logging.DEBUG, logger=name)
    yield caplog


@pytest.mark.parametrize("kind", ERROR_KINDS)
def test_hidden_parameters_never_show(endpoint_url, notes, debug_logs, kind) -> None:
    engine = _engine(endpoint_url, hidden=True)
    try:
        with pytest.raises(Exception) as raised:
            ERROR_KINDS[kind](engine, notes)
    finally:
        engine.dispose()
    shown = _everything_shown(raised.value)
    logs = "\n".join(record.getMessage() for record in debug_logs.records)
    assert "hide_parameters" in shown or "hide_parameters" in logs  # hidden, not merely absent
    for text in (shown, logs):
        assert MARKER not in text
        assert DIGITS[:10] not in text


@pytest.mark.parametrize("kind", ERROR_KINDS)
def test_values_in_messages_are_cut_short(endpoint_url, notes, kind) -> None:
    """Without hide_parameters a message may quote a value or key, at most 32 characters of it."""
    engine = _engine(endpoint_url, hidden=False)
    try:
        with pytest.raises(Exception) as raised:
            ERROR_KINDS[kind](engine, notes)
    finally:
        engine.dispose()
    message = str(getattr(raised.value, "orig", None) or raised.value)
    assert MARKER * 3 not in message
    assert "x" * 40 not in message


def _template_errors(engine: Engine) -> Iterator[BaseException]:
    """The errors of key templates as a flush meets them: a number too wide for its fixed-width
    format, and a change of a key's source that would move the item to another key."""

    class Base(DeclarativeBase):
        pass

    class Order(Base):
        __tablename__ = f"hidden_orders_{uuid.uuid4().hex[:8]}"
        __key_templates__ = {"pk": "CUSTOMER#{customer}", "sk": "ORDER#{number:05d}"}
        pk: Mapped[str] = mapped_column(primary_key=True)
        sk: Mapped[str] = mapped_column(primary_key=True)
        customer: Mapped[str]
        number: Mapped[int]

    Base.metadata.create_all(engine)
    try:
        with Session(engine) as session:
            session.add(Order(customer="c", number=int(DIGITS[:12])))
            with pytest.raises(Exception) as too_wide:
                session.commit()
        yield too_wide.value
        with Session(engine) as session:
            session.add(Order(customer=MARKER, number=1))
            session.commit()
            session.get(Order, (f"CUSTOMER#{MARKER}", "ORDER#00001")).customer = MARKER + "2"
            with pytest.raises(Exception) as moved:
                session.commit()
        yield moved.value
    finally:
        Base.metadata.drop_all(engine)


def test_key_template_errors_hide_values(endpoint_url, debug_logs) -> None:
    engine = _engine(endpoint_url, hidden=True)
    try:
        errors = list(_template_errors(engine))
    finally:
        engine.dispose()
    assert ["fixed width" in str(errors[0]), "keys are immutable" in str(errors[1])] == [True, True]
    for error in errors:
        shown = _everything_shown(error)
        assert "hide_parameters" in shown
        assert MARKER not in shown
        assert DIGITS[:10] not in shown
