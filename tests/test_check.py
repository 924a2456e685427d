"""`sa-dynamo check`: the models against live tables that boto3 made differ from them, one way
at a time; every message is asserted whole, because the message is the product."""

from __future__ import annotations

import os
import re
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Column, Index, Integer, LargeBinary, MetaData, String, Table
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

import sa_dynamo
from sa_dynamo import cli, local_server
from sa_dynamo.check import Difference, check
from sa_dynamo.dialect.ddl import create_table_request

KEY_SCHEMA_FIX = "a table's key schema cannot change; recreate the table or change the models to match"
RECREATE_INDEX = "drop the index and create it again (Index.drop, Index.create)"
RECREATE_TABLE = "recreate the table (a local index is created and removed only with its table)"


@pytest.fixture
def url(engine: Any) -> str:
    return engine.url.render_as_string()


def _keys(spec: str) -> tuple[list[dict[str, str]], dict[str, str]]:
    """'pk:S sk:N' -> (KeySchema, {attribute: type})."""
    pairs = [word.split(":") for word in spec.split()]
    schema = [{"AttributeName": n, "KeyType": "RANGE" if i else "HASH"} for i, (n, _) in enumerate(pairs)]
    return schema, dict(pairs)


def _projection(projection: str | list[str]) -> dict[str, Any]:
    if isinstance(projection, list):
        return {"ProjectionType": "INCLUDE", "NonKeyAttributes": projection}
    return {"ProjectionType": projection}


def request(name: str, keys: str, gsis: dict | None = None, lsis: dict | None = None) -> dict[str, Any]:
    """A CreateTable request written out by hand: keys are 'name:TYPE' words (partition key
    first), index projections 'ALL', 'KEYS_ONLY' or the list of included attributes."""
    key_schema, types = _keys(keys)
    made: dict[str, Any] = {"TableName": name, "KeySchema": key_schema, "BillingMode": "PAY_PER_REQUEST"}
    for field, indexes in (("GlobalSecondaryIndexes", gsis), ("LocalSecondaryIndexes", lsis)):
        entries = []
        for index, (index_keys, projection) in (indexes or {}).items():
            index_schema, index_types = _keys(index_keys)
            types.update(index_types)
            entries.append(
                {"IndexName": index, "KeySchema": index_schema, "Projection": _projection(projection)}
            )
        if entries:
            made[field] = entries
    made["AttributeDefinitions"] = [{"AttributeName": n, "AttributeType": t} for n, t in types.items()]
    return made


@pytest.fixture
def live(raw: Any) -> Iterator[Callable[[dict[str, Any]], None]]:
    """Create tables with boto3 alone (not through the dialect); delete them after the test."""
    created: list[str] = []

    def create(request: dict[str, Any]) -> None:
        raw.create_table(**request)
        created.append(request["TableName"])

    yield create
    for name in created:
        raw.delete_table(TableName=name)


@pytest.fixture
def bases() -> Iterator[list[Any]]:
    """Declarative bases whose registries are disposed after the test (and held until then:
    SQLAlchemy's registries refer to classes weakly)."""
    held: list[Any] = []
    yield held
    for base in held:
        base.registry.dispose()


def test_matching_models_give_no_differences(live, engine, table_name, bases) -> None:
    class Base(DeclarativeBase):
        pass

    class Item(sa_dynamo.SingleTable, Base):
        __tablename__ = table_name
        __table_args__ = (
            Index(
                "by_status",
                "gsi1pk",
                "created",
                dynamodb_projection="INCLUDE",
                dynamodb_include=["status", "$type"],
            ),
            Index("by_kind", "$type", "sk", dynamodb_projection="KEYS_ONLY"),
            Index("by_created", "pk", "created", dynamodb_local=True),
        )
        # Declared sort key first: the roles come from dynamodb_key, not from the order.
        sk: Mapped[str] = mapped_column(primary_key=True, dynamodb_key="range")
        pk: Mapped[str] = mapped_column(primary_key=True)
        gsi1pk: Mapped[str | None]
        created: Mapped[int | None]
        status: Mapped[str | None]

    class Order(Item):  # a subclass on the same table changes nothing
        total: Mapped[int | None]

    bases.append(Base)
    live(
        request(
            table_name,
            "pk:S sk:S",
            gsis={
                "by_status": ("gsi1pk:S created:N", ["$type", "status"]),
                "by_kind": ("$type:S sk:S", "KEYS_ONLY"),
            },
            lsis={"by_created": ("pk:S created:N", "ALL")},
        )
    )
    assert check(Base, engine) == []


def test_a_table_missing_in_dynamodb(engine, table_name) -> None:
    metadata = MetaData()
    Table(table_name, metadata, Column("pk", String, primary_key=True))
    missing = Difference(
        table_name,
        None,
        None,
        f"table {table_name} does not exist in DynamoDB: create it (metadata.create_all(engine) "
        "creates every missing table)",
    )
    assert check(metadata, engine) == [missing]
    with engine.connect() as connection:
        assert check(metadata, connection) == [missing]


@pytest.mark.parametrize(
    ("model", "in_dynamodb", "attribute", "says"),
    [
        ("pk:S sk:S", "id:S sk:S", "pk", "partition key 'pk' (S) in the models but partition key 'id' (S)"),
        ("pk:S sk:S", "pk:N sk:S", "pk", "partition key 'pk' (S) in the models but partition key 'pk' (N)"),
        ("pk:S sk:S", "pk:S sk:B", "sk", "sort key 'sk' (S) in the models but sort key 'sk' (B)"),
        ("pk:S sk:N", "pk:S sort:N", "sk", "sort key 'sk' (N) in the models but sort key 'sort' (N)"),
        ("pk:S sk:S", "pk:S", "sk", "sort key 'sk' (S) in the models but no sort key"),
        ("pk:S", "pk:S sk:S", "sk", "no sort key in the models but sort key 'sk' (S)"),
    ],
)
def test_key_schema_differences(live, engine, table_name, model, in_dynamodb, attribute, says) -> None:
    types = {"S": String, "N": Integer, "B": LargeBinary}
    metadata = MetaData()
    columns = [Column(n, types[t], primary_key=True) for n, t in (w.split(":") for w in model.split())]
    Table(table_name, metadata, *columns)
    live(request(table_name, in_dynamodb))
    message = f"table {table_name} has {says} in DynamoDB: {KEY_SCHEMA_FIX}"
    assert check(metadata, engine) == [Difference(table_name, None, attribute, message)]


def test_index_differences(live, engine, table_name) -> None:
    metadata = MetaData()
    Table(
        table_name,
        metadata,
        *(
            Column(name, String, primary_key=name in ("pk", "sk"))
            for name in ("pk", "sk", "a", "b", "c", "d")
        ),
        Column("k1", String),
        Column("k2", String),
        Index("missing", "a", "b"),
        Index("missing_local", "pk", "c", dynamodb_local=True),
        Index("by_name", "k1", "k2"),
        Index("by_type", "k1", "k2"),
        Index("kind", "pk", "d"),
        Index("projection", "a", dynamodb_projection="ALL"),
        Index("include", "a", dynamodb_projection="INCLUDE", dynamodb_include=["a1", "b1"]),
        Index("same", "a", dynamodb_projection="INCLUDE", dynamodb_include=["a1", "b1"]),
    )
    live(
        request(
            table_name,
            "pk:S sk:S",
            gsis={
                "extra": ("x:S", ["b1", "a1"]),
                "by_name": ("k3:S k2:S", "ALL"),
                "by_type": ("k1:S k4:N", "ALL"),
                "projection": ("a:S", "KEYS_ONLY"),
                "include": ("a:S", ["a1", "c1"]),
                "same": ("a:S", ["b1", "a1"]),
            },
            lsis={"extra_local": ("pk:S c:S", "KEYS_ONLY"), "kind": ("pk:S d:S", "ALL")},
        )
    )
    table = f"table {table_name}: index"
    assert check(metadata, engine) == [
        Difference(
            table_name,
            "by_name",
            "k1",
            f"{table} by_name has partition key 'k1' (S) in the models but partition key 'k3' (S) in "
            f"DynamoDB: {RECREATE_INDEX}",
        ),
        Difference(
            table_name,
            "by_type",
            "k2",
            f"{table} by_type has sort key 'k2' (S) in the models but sort key 'k4' (N) in DynamoDB: "
            f"{RECREATE_INDEX}",
        ),
        Difference(
            table_name,
            "extra",
            None,
            f"{table} extra (global) exists in DynamoDB but not in the models: declare it as "
            "Index('extra', 'x', dynamodb_projection='INCLUDE', dynamodb_include=['b1', 'a1']) or drop it "
            "(Index.drop)",
        ),
        Difference(
            table_name,
            "extra_local",
            None,
            f"{table} extra_local (local) exists in DynamoDB but not in the models: declare it as "
            "Index('extra_local', 'pk', 'c', dynamodb_projection='KEYS_ONLY', dynamodb_local=True) or "
            "recreate the table without it",
        ),
        Difference(
            table_name,
            "include",
            "b1",
            f"{table} include projects INCLUDE ['a1', 'b1'] in the models but INCLUDE ['a1', 'c1'] in "
            f"DynamoDB: a projection cannot change in place; {RECREATE_INDEX}",
        ),
        Difference(
            table_name,
            "kind",
            None,
            f"{table} kind is global in the models but local in DynamoDB: {RECREATE_TABLE}",
        ),
        Difference(
            table_name,
            "missing",
            None,
            f"{table} missing (global) is missing in DynamoDB: create it (Index.create or a migration)",
        ),
        Difference(
            table_name,
            "missing_local",
            None,
            f"{table} missing_local (local) is missing in DynamoDB: {RECREATE_TABLE}",
        ),
        Difference(
            table_name,
            "projection",
            None,
            f"{table} projection projects ALL in the models but KEYS_ONLY in DynamoDB: a projection "
            f"cannot change in place; {RECREATE_INDEX}",
        ),
    ]


def test_indexes_of_tables_with_a_discriminator_must_project_it(live, engine, table_name, bases) -> None:
    class Base(DeclarativeBase):
        pass

    class Item(sa_dynamo.SingleTable, Base):
        __tablename__ = f"{table_name}_a"
        __table_args__ = (
            Index("keys_only", "g", dynamodb_projection="KEYS_ONLY"),
            Index("include_other", "g", dynamodb_projection="INCLUDE", dynamodb_include=["status"]),
            Index("include_type", "g", dynamodb_projection="INCLUDE", dynamodb_include=["$type"]),
            Index("all", "g"),
            Index("local_keys", "pk", "g", dynamodb_local=True, dynamodb_projection="KEYS_ONLY"),
        )
        pk: Mapped[str] = mapped_column(primary_key=True)
        sk: Mapped[str] = mapped_column(primary_key=True)
        g: Mapped[str | None]
        status: Mapped[str | None]

    class Customer(Item):  # shares the table: one discriminator, one line per index
        name: Mapped[str | None]

    class Event(Base):  # plain SQLAlchemy single-table inheritance, its own attribute name
        __tablename__ = f"{table_name}_b"
        __table_args__ = (Index("by_g", "g", dynamodb_projection="KEYS_ONLY"),)
        __mapper_args__ = {"polymorphic_on": "kind", "polymorphic_identity": "event"}
        pk: Mapped[str] = mapped_column(primary_key=True)
        kind: Mapped[str] = mapped_column("entityType")
        g: Mapped[str | None]

    class Counter(Base):  # one kind of item: nothing to filter by
        __tablename__ = f"{table_name}_c"
        __table_args__ = (Index("by_g", "g", dynamodb_projection="KEYS_ONLY"),)
        pk: Mapped[str] = mapped_column(primary_key=True)
        g: Mapped[str | None]

    bases.append(Base)
    for table in Base.metadata.sorted_tables:  # the live tables match; only the projections are wrong
        live(create_table_request(table))

    def unprojected(table: str, index: str, projects: str, discriminator: str, fix: str) -> Difference:
        return Difference(
            f"{table_name}_{table}",
            index,
            discriminator,
            f"table {table_name}_{table}: index {index} projects {projects} and does not include the "
            f"discriminator {discriminator!r}, so base-class queries on it cannot filter by kind: {fix}",
        )

    add_include = "declare dynamodb_projection='INCLUDE', dynamodb_include=['$type'] and recreate"
    assert check(Base.registry, engine) == [
        unprojected(
            "a",
            "include_other",
            "INCLUDE ['status']",
            "$type",
            "declare dynamodb_include=['status', '$type'] and recreate the index",
        ),
        unprojected("a", "keys_only", "KEYS_ONLY", "$type", f"{add_include} the index"),
        unprojected("a", "local_keys", "KEYS_ONLY", "$type", f"{add_include} the table"),
        unprojected(
            "b",
            "by_g",
            "KEYS_ONLY",
            "entityType",
            "declare dynamodb_projection='INCLUDE', dynamodb_include=['entityType'] and recreate the index",
        ),
    ]


# -- the command --------------------------------------------------------------------------

MODELS = """
    from sqlalchemy import Column, Index, MetaData, String, Table
    from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

    import sa_dynamo


    class Base(DeclarativeBase):
        pass


    class Item(sa_dynamo.SingleTable, Base):
        __tablename__ = {table!r}
        __table_args__ = (Index("by_status", "status", dynamodb_projection={projection!r}),)
        pk: Mapped[str] = mapped_column(primary_key=True)
        sk: Mapped[str] = mapped_column(primary_key=True)
        status: Mapped[str | None]


    metadata = Base.metadata
    answer = 42
    empty = MetaData()
    keyless = MetaData()
    Table("keyless", keyless, Column("x", String))
"""


@pytest.fixture
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., str]]:
    """Write a models module (MODELS) under a fresh name on sys.path; return its name."""
    monkeypatch.syspath_prepend(str(tmp_path))
    names: list[str] = []

    def write(table: str, projection: str = "ALL", directory: Path = tmp_path) -> str:
        name = f"models_{uuid.uuid4().hex[:8]}"
        directory.mkdir(exist_ok=True)
        (directory / f"{name}.py").write_text(
            textwrap.dedent(MODELS.format(table=table, projection=projection))
        )
        names.append(name)
        return name

    yield write
    for name in names:
        module = sys.modules.pop(name, None)
        if module is not None:
            module.Base.registry.dispose()


def test_exit_code_0_when_the_models_match(live, url, table_name, models, capsys) -> None:
    live(request(table_name, "pk:S sk:S", gsis={"by_status": ("status:S", "ALL")}))
    assert cli.main(["check", f"{models(table_name)}:Base", "--url", url]) == 0
    assert capsys.readouterr() == ("no differences: DynamoDB matches the models\n", "")


def test_the_current_directory_is_importable(
    live, url, table_name, models, capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"  # not on sys.path: found because it is the working directory
    module = models(table_name, directory=project)
    monkeypatch.chdir(project)
    live(request(table_name, "pk:S sk:S", gsis={"by_status": ("status:S", "ALL")}))
    assert cli.main(["check", f"{module}:Base", "--url", url]) == 0
    assert os.getcwd() not in sys.path
    assert capsys.readouterr().out == "no differences: DynamoDB matches the models\n"


@pytest.mark.parametrize(
    ("name", "discriminator_reported", "summary"),
    [
        ("Base", True, "2 differences in 1 table"),
        ("metadata", False, "1 difference in 1 table"),  # a MetaData has no mappers: no discriminator
    ],
)
def test_exit_code_1_lists_each_difference(
    url, table_name, models, capsys, name, discriminator_reported, summary
) -> None:
    module = models(table_name, projection="KEYS_ONLY")
    lines = [
        f"table {table_name} does not exist in DynamoDB: create it (metadata.create_all(engine) creates "
        "every missing table)"
    ]
    if discriminator_reported:
        lines.append(
            f"table {table_name}: index by_status projects KEYS_ONLY and does not include the "
            "discriminator '$type', so base-class queries on it cannot filter by kind: declare "
            "dynamodb_projection='INCLUDE', dynamodb_include=['$type'] and recreate the index"
        )
    lines.append(summary)
    assert cli.main(["check", f"{module}:{name}", "--url", url]) == 1
    assert capsys.readouterr() == ("\n".join(lines) + "\n", "")


@pytest.mark.parametrize(
    ("target", "address", "error"),
    [
        (
            "no_such_module_xyz:Base",
            None,
            r"cannot import 'no_such_module_xyz' \(No module named 'no_such_module_xyz'\): run from the "
            r"directory that contains it or add that directory to PYTHONPATH",
        ),
        ("{module}", None, r"expected MODULE:NAME \(e\.g\. myapp\.models:Base\), not 'models_\w+'"),
        ("{module}:Nope", None, r"module 'models_\w+' has no attribute 'Nope'"),
        (
            "{module}:answer",
            None,
            r"42 is not a declarative base, a registry or a MetaData: pass the models' declarative base "
            r"\(or their MetaData\)",
        ),
        (
            "{module}:empty",
            None,
            r"MetaData\(\) declares no tables: pass the base of modules that define models, or import "
            r"those modules in the one named",
        ),
        ("{module}:keyless", None, r"table 'keyless' has no primary key: mark its partition key column .*"),
        (
            "{module}:Base",
            "nonsense",
            r"the database URL cannot be read: write dynamodb://HOST:PORT, .* with the secret URL-encoded",
        ),
        ("{module}:Base", "sqlite://", r"check compares with DynamoDB, not sqlite: pass a dynamodb:// bind"),
        (
            "{module}:Base",
            "dynamodb://127.0.0.1:{port}",
            r"cannot read the tables at dynamodb://127\.0\.0\.1:(\d+): nothing is listening on "
            r"127\.0\.0\.1:\1: start DynamoDB Local there \(sa-dynamo local start --port \1\), or use "
            r"dynamodb\+local:// for an embedded one",
        ),
    ],
)
def test_exit_code_2_is_one_line_without_traceback(
    url, table_name, models, capsys, target, address, error
) -> None:
    target = target.format(module=models(table_name))
    address = (address or url).format(port=local_server.free_port())
    assert cli.main(["check", target, "--url", address]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert re.fullmatch(f"sa-dynamo: {error}\n", err), err
