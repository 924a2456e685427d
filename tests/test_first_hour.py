"""The first hour's mistakes: each gets one line that names what is wrong and what to do next,
and nothing is sent (or created) where the mistake can be seen before sending."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator

import pytest
from sqlalchemy import Column, Index, Integer, MetaData, String, Table, create_engine, event, insert, select
from sqlalchemy.exc import ArgumentError, OperationalError, ProgrammingError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import sa_dynamo
from sa_dynamo import local_server
from sa_dynamo.exc import LocalError

AUTOCOMMIT = {"isolation_level": "AUTOCOMMIT"}
CREATE_IT = "create it first (metadata.create_all(engine), or an Alembic migration)"


@pytest.fixture
def requests(engine) -> Iterator[list[str]]:
    """The names of the requests the engine's clients send from now on."""
    sent: list[str] = []

    def count(operation, body, answer) -> None:
        sent.append(operation)

    @event.listens_for(engine, "connect")
    def watch(dbapi_connection, record) -> None:
        dbapi_connection.transport.observers.append(count)

    engine.dispose()  # new connections, each watched
    yield sent
    event.remove(engine, "connect", watch)
    engine.dispose()


@pytest.fixture
def missing(table_name) -> Table:
    """A table nobody created."""
    return Table(table_name, MetaData(), Column("id", String, primary_key=True), Column("n", Integer))


def where(engine) -> str:
    with engine.connect() as conn:
        return conn.connection.dbapi_connection.transport.where


def test_a_commit_to_a_missing_table_names_it(engine, missing):
    with pytest.raises(ProgrammingError) as failed, engine.begin() as conn:
        conn.execute(insert(missing), {"id": "a", "n": 1})
    assert str(
        failed.value.orig
    ) == f"table {missing.name!r} does not exist {where(engine)}: {CREATE_IT}, " + (
        "or check the name (table names are case-sensitive) and the URL's region and endpoint"
    )
    assert failed.value.orig.code == "ResourceNotFoundException"  # DynamoDB's code stays to branch on


def test_an_orm_commit_names_every_table_it_writes(engine, table_name):
    class Base(DeclarativeBase):
        pass

    class Hero(Base):
        __tablename__ = f"{table_name}_heroes"
        id: Mapped[str] = mapped_column(primary_key=True)

    class Team(Base):
        __tablename__ = f"{table_name}_teams"
        id: Mapped[str] = mapped_column(primary_key=True)

    with (
        pytest.raises(
            ProgrammingError, match=rf"one of the tables '{Hero.__tablename__}', '{Team.__tablename__}'"
        ),
        Session(engine) as session,
        session.begin(),
    ):
        session.add_all([Hero(id="1"), Team(id="1")])


@pytest.mark.parametrize("rows", [1, 3], ids=["one row", "executemany"])
def test_an_autocommit_write_or_read_of_a_missing_table_names_it(engine, missing, rows):
    with engine.connect().execution_options(**AUTOCOMMIT) as conn:
        with pytest.raises(
            ProgrammingError,
            match=rf"table '{missing.name}' does not exist in region .*{re.escape(CREATE_IT)}",
        ):
            conn.execute(insert(missing), [{"id": str(i), "n": i} for i in range(rows)])
        with pytest.raises(ProgrammingError, match=rf"table '{missing.name}' does not exist") as failed:
            conn.execute(select(missing).where(missing.c.id == "a")).all()
    assert failed.value.statement.startswith("SELECT")  # the statement is shown with it


def test_an_upsert_to_a_missing_table_names_it(engine, missing):
    with (
        engine.connect().execution_options(**AUTOCOMMIT) as conn,
        pytest.raises(
            ProgrammingError, match=rf"table '{missing.name}' does not exist .* not applied: rows 0-1"
        ),
    ):
        conn.execute(sa_dynamo.upsert(missing), [{"id": "a"}, {"id": "b"}])


@pytest.mark.parametrize(
    ("table", "index", "named"),
    [
        ("ty", "gsi_ok", "DynamoDB cannot name a table 'ty': it has 2 characters"),
        ("hero team", "gsi_ok", r"DynamoDB cannot name a table 'hero team': it contains ' '"),
        ("heroes_ok", "ix", "DynamoDB cannot name a index 'ix': it has 2 characters"),
    ],
)
def test_a_name_dynamodb_refuses_is_refused_before_sending(engine, requests, table, index, named):
    metadata = MetaData()
    Table(table, metadata, Column("id", String, primary_key=True), Column("g", String), Index(index, "g"))
    with pytest.raises(ProgrammingError, match=named):
        metadata.create_all(engine)
    assert "CreateTable" not in requests
    if table == "ty":
        assert requests == []  # not even the DescribeTable of create_all's check


def test_nothing_listening_on_a_loopback_endpoint_fails_at_once():
    """Without the check botocore retries the refused connection for about half a minute and
    prints 150 lines."""
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    engine = create_engine(f"dynamodb://127.0.0.1:{port}?max_attempts=10")
    with engine.connect() as conn, pytest.raises(OperationalError) as failed:  # connecting sends nothing
        conn.exec_driver_sql('SELECT * FROM "heroes" WHERE "id" = ?', ("1",))
    assert str(failed.value.orig) == (
        f"nothing is listening on 127.0.0.1:{port}: start DynamoDB Local there (sa-dynamo local start "
        f"--port {port}), or use dynamodb+local:// for an embedded one"
    )


def test_a_data_dir_whose_parent_is_missing_is_refused_and_not_created(tmp_path):
    wanted = tmp_path / "typo" / "data"
    engine = create_engine(f"dynamodb+local://?data_dir={wanted}")
    with pytest.raises(
        LocalError, match=rf"data_dir '{wanted}': the directory '{wanted.parent}' does not exist"
    ):
        local_server.start(data_dir=wanted)
    assert not wanted.parent.exists()
    engine.dispose()


def test_a_data_dir_is_made_when_only_it_is_missing(tmp_path):
    server = local_server.start(data_dir=tmp_path / "data")
    try:
        assert (tmp_path / "data").is_dir()
    finally:
        server.stop()


@pytest.mark.parametrize("url", ["dynamodb://localhost:8000/mydb", "dynamodb+local:///mydb"])
def test_a_database_in_the_url_is_refused(url):
    with pytest.raises(ArgumentError, match="URLs take no database, but this one names 'mydb'"):
        create_engine(url).dialect.create_connect_args(create_engine(url).url)
