"""Mappers configured before sa_dynamo is imported (by create_engine() loading the dialect, or an
``import sa_dynamo`` after the models): their ``mapper_configured`` events are past, and their
shared tables are still checked, once, before the first statement of a DynamoDB engine. Each
case runs in a fresh interpreter, where nothing has imported sa_dynamo yet."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import Column, MetaData, String, Table

ROOT = Path(__file__).resolve().parent.parent.parent

MODELS = """
import sys

from sqlalchemy import String, create_engine, select
from sqlalchemy.orm import DeclarativeBase, Session, configure_mappers, mapped_column

assert "sa_dynamo" not in sys.modules


class Base(DeclarativeBase):
    pass


class Entry(Base):
    __tablename__ = sys.argv[2]
    pk = mapped_column(String, primary_key=True)
    sk = mapped_column(String, primary_key=True)
    kind = mapped_column(String)
    {entry}


class Profile(Entry):
    {profile}


class Purchase(Entry):
    order_id = mapped_column(String)
    {purchase}


configure_mappers()
"""

# plain single-table inheritance: SQLite loads the profile as a purchase, and it is no error there
SQLITE = """
sqlite = create_engine("sqlite://")
Base.metadata.create_all(sqlite)
with Session(sqlite) as session, session.begin():
    session.add(Profile(pk="C#1", sk="PROFILE", kind="profile"))
with Session(sqlite) as session:
    print("sqlite:", [(type(p).__name__, p.sk) for p in session.scalars(select(Purchase))])
"""

DYNAMODB = """
{import_}
engine = create_engine(sys.argv[1])
from sa_dynamo.orm import shared_tables

checks = []
checking = shared_tables.validate
shared_tables.validate = lambda *a, **k: (checks.append(1), checking(*a, **k))[1]
for attempt in range(3):
    with Session(engine) as session:
        try:
            rows = [(type(p).__name__, p.sk) for p in session.scalars(select(Purchase).where(Purchase.pk == "C#1"))]
            print("dynamodb:", sorted(rows))
        except Exception as error:
            print("error:", type(error).__name__, error)
print("checks:", len(checks))
"""


def _run(endpoint_url: str, table: str, discriminator: bool, import_first: bool) -> list[str]:
    if discriminator:
        kinds = {
            part: f"__mapper_args__ = {{{args}}}"
            for part, args in (
                ("entry", "'polymorphic_on': 'kind', 'polymorphic_identity': 'entry'"),
                ("profile", "'polymorphic_identity': 'profile'"),
                ("purchase", "'polymorphic_identity': 'purchase'"),
            )
        }
    else:
        kinds = {"entry": "", "profile": "pass", "purchase": ""}
    script = MODELS.format(**kinds) + SQLITE
    script += DYNAMODB.format(import_="import sa_dynamo" if import_first else "")
    done = subprocess.run(
        [sys.executable, "-c", script, f"dynamodb://{endpoint_url.removeprefix('http://')}", table],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=os.environ,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.fixture
def entries(engine, table_name: str, raw):
    table = Table(
        table_name,
        MetaData(),
        Column("pk", String, primary_key=True),
        Column("sk", String, primary_key=True),
    )
    table.create(engine)
    for sk, kind in (("PROFILE", "profile"), ("ORDER#1", "purchase")):
        raw.put_item(TableName=table_name, Item={"pk": {"S": "C#1"}, "sk": {"S": sk}, "kind": {"S": kind}})
    yield table_name
    table.drop(engine)


@pytest.mark.parametrize("import_first", [False, True], ids=["create_engine", "import"])
def test_a_hierarchy_without_a_discriminator_is_refused_at_each_dynamodb_statement(
    endpoint_url: str, entries: str, import_first: bool
):
    """Without the check, select(Purchase) would load the profile as a purchase (SQLite does,
    and is left alone); the mismatch is raised again at each statement, never a wrong row."""
    sqlite, *dynamodb, checks = _run(endpoint_url, entries, discriminator=False, import_first=import_first)
    assert sqlite == "sqlite: [('Purchase', 'PROFILE')]"
    assert (
        dynamodb
        == [
            f"error: KeySchemaMismatchError Entry and Profile (one hierarchy, root Entry) share DynamoDB table "
            f"{entries!r} without a discriminator: nothing on an item says which class loads it, so a query for "
            "one would load the other's items as its own. Give Entry polymorphic_on (or derive it from "
            "sa_dynamo.SingleTable), or, when their key patterns never overlap, say so with "
            "__discriminator__ = None on Entry"
        ]
        * 3
    )
    assert checks == "checks: 3"


def test_agreeing_classes_are_checked_once(endpoint_url: str, entries: str):
    """With a discriminator: the purchase alone loads, and the check ran before the first
    statement only."""
    sqlite, *dynamodb, checks = _run(endpoint_url, entries, discriminator=True, import_first=False)
    assert sqlite == "sqlite: []"
    assert dynamodb == ["dynamodb: [('Purchase', 'ORDER#1')]"] * 3
    assert checks == "checks: 1"
