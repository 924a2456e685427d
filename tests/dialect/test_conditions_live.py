"""Each translated condition against DynamoDB Local: the rows SQL semantics say, no more."""

from __future__ import annotations

from decimal import Decimal

import pytest
from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Integer,
    MetaData,
    String,
    Table,
    bindparam,
    create_engine,
    event,
    func,
    not_,
    or_,
    select,
    update,
)
from sqlalchemy.exc import CompileError, StatementError

import sa_dynamo


def value_of(i: int) -> dict:
    """Row i: every attribute is absent on some rows."""
    return {
        "pk": "A",
        "sk": i,
        "b": [True, False, None][i % 3],
        "n": None if i % 4 == 0 else i,
        "s": [None, "ab", "abc", "x"][i % 4],
        "tags": {"red", "blue"} if i % 2 else None,
        "doc": {"a": {"b": i}, "l": [i, "q"]} if i % 5 else None,
    }


@pytest.fixture(scope="module")
def table(endpoint_url):
    engine = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}")
    metadata = MetaData()
    table = Table(
        "conditions_live",
        metadata,
        Column("pk", String, primary_key=True),
        Column("sk", Integer, primary_key=True),
        Column("b", Boolean),
        Column("n", Integer),
        Column("s", String),
        Column("tags", sa_dynamo.StringSet),
        Column("doc", JSON),
    )
    metadata.create_all(engine)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(table.insert(), [value_of(i) for i in range(12)])
    yield engine, table
    metadata.drop_all(engine)
    engine.dispose()


def expected(predicate) -> list[int]:
    """The rows SQL's three-valued logic returns: a predicate that is unknown (None) is no row."""
    return [i for i in range(12) if predicate(value_of(i)) is True]


def known(*values) -> bool:
    return all(v is not None for v in values)


CASES = [
    ("bare boolean", lambda t: t.c.b, lambda r: r["b"] is True),
    ("negated boolean", lambda t: ~t.c.b, lambda r: r["b"] is False),
    ("not between", lambda t: ~t.c.n.between(3, 8), lambda r: known(r["n"]) and not 3 <= r["n"] <= 8),
    ("contains on a string", lambda t: t.c.s.contains("b"), lambda r: known(r["s"]) and "b" in r["s"]),
    (
        "contains on a set",
        lambda t: t.c.tags.contains("red"),
        lambda r: known(r["tags"]) and "red" in r["tags"],
    ),
    ("size", lambda t: func.size(t.c.tags) == 2, lambda r: known(r["tags"]) and len(r["tags"]) == 2),
    ("attribute_type", lambda t: func.attribute_type(t.c.doc, "M"), lambda r: known(r["doc"])),
    ("attribute_exists", lambda t: func.attribute_exists(t.c.n), lambda r: known(r["n"])),
    ("not attribute_exists", lambda t: ~func.attribute_exists(t.c.n), lambda r: not known(r["n"])),
    ("json path", lambda t: t.c.doc["a"]["b"] >= 7, lambda r: known(r["doc"]) and r["doc"]["a"]["b"] >= 7),
    ("json index", lambda t: t.c.doc["l"][0] < 3, lambda r: known(r["doc"]) and r["doc"]["l"][0] < 3),
    (
        "json tuple path",
        lambda t: t.c.doc[("l", 0)] >= 7,
        lambda r: known(r["doc"]) and r["doc"]["l"][0] >= 7,
    ),
    (
        "not of or",
        lambda t: not_(or_(t.c.n == 1, t.c.s == "x")),
        lambda r: known(r["n"], r["s"]) and r["n"] != 1 and r["s"] != "x",
    ),
    ("not equal", lambda t: t.c.s != "ab", lambda r: known(r["s"]) and r["s"] != "ab"),
    ("is null", lambda t: t.c.n.is_(None), lambda r: not known(r["n"])),
    ("not in", lambda t: t.c.n.not_in([1, 2, 3]), lambda r: known(r["n"]) and r["n"] not in (1, 2, 3)),
]


@pytest.mark.parametrize(("condition", "predicate"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_condition_returns_exactly_the_sql_rows(table, condition, predicate):
    engine, t = table
    with engine.connect() as conn:
        rows = conn.scalars(select(t.c.sk).where(t.c.pk == "A", condition(t))).all()
    assert rows == expected(predicate)
    assert rows, "a condition that matches nothing proves nothing"


def test_reversed_sort_key_between_returns_no_rows_without_asking(table, sent):
    engine, t = table
    with engine.connect() as conn:
        assert conn.scalars(select(t.c.sk).where(t.c.pk == "A", t.c.sk.between(9, 2))).all() == []
        assert conn.scalars(select(t.c.sk).where(t.c.pk == "A", t.c.n.between(9, 2))).all() == []
        assert conn.scalars(select(t.c.sk).where(t.c.pk == "A", t.c.sk.between(2, 4))).all() == [2, 3, 4]


def test_empty_key_values_are_refused_before_sending(table):
    from sqlalchemy.exc import CompileError

    engine, t = table
    with engine.connect() as conn:
        for condition in (t.c.pk == "", t.c.pk.in_(["A", ""])):
            with pytest.raises(CompileError, match="key attribute 'pk' with an empty value"):
                conn.execute(select(t.c.sk).where(condition))


def test_an_empty_prefix_of_a_key_holds_for_every_item(table):
    """SQL's ``pk LIKE '%'`` is TRUE for every key (no item lacks one), and so FALSE below NOT:
    DynamoDB, which rejects an empty key value, is sent ``? = ''`` in its place."""
    engine, t = table
    every = select(t.c.sk).where(t.c.pk == "A")
    with engine.connect().execution_options(dynamodb_scan="allow") as conn:
        rows = conn.scalars(every).all()
        assert conn.scalars(every.where(t.c.pk.startswith(""))).all() == rows
        assert conn.scalars(every.where(t.c.pk.like("%"))).all() == rows
        assert conn.scalars(every.where(~t.c.pk.startswith(""))).all() == []
        scan = select(t.c.sk).where(t.c.pk.startswith(""))
        assert sorted(conn.scalars(scan)) == sorted(conn.scalars(select(t.c.sk)))


def test_repeated_partition_keys_read_the_partition_once(table):
    engine, t = table
    with engine.connect() as conn:
        assert len(conn.scalars(select(t.c.sk).where(t.c.pk.in_(["A", "A"]))).all()) == 12


def test_like_wildcards_in_a_prefix_are_refused_and_autoescape_matches_literally(table, sent):
    from sqlalchemy.exc import CompileError

    engine, t = table
    rows = [{"pk": "L", "sk": i, "s": s} for i, s in enumerate(["a_b", "a%b", "axb", "a/b"])]
    with engine.begin() as conn:
        conn.execute(t.insert(), rows)
    try:
        with engine.connect() as conn:
            for condition in (t.c.s.startswith("a_"), t.c.s.contains("%"), ~t.c.s.startswith("a%")):
                with pytest.raises(CompileError, match="pass autoescape=True to"):
                    conn.execute(select(t.c.sk).where(t.c.pk == "L", condition))
            assert sent == []  # refused before sending

            def matching(condition) -> list[int]:
                return conn.scalars(select(t.c.sk).where(t.c.pk == "L", condition)).all()

            assert matching(t.c.s.startswith("a_", autoescape=True)) == [0]
            assert matching(t.c.s.contains("%", autoescape=True)) == [1]
            assert matching(t.c.s.startswith("a/", autoescape=True)) == [3]
            assert matching(t.c.s.startswith("a^%", escape="^")) == [1]
            assert matching(t.c.s.startswith("a")) == [0, 1, 2, 3]
    finally:
        with engine.begin() as conn:
            for row in rows:
                conn.execute(t.delete().where(t.c.pk == "L", t.c.sk == row["sk"]))


def test_json_elements_read_with_as_type_are_converted_in_python(table):
    """DynamoDB has no CAST: doc[...].as_string() and friends convert the stored element after
    reading, as SQL's cast would; the stored element itself is unchanged."""
    engine, t = table
    element = t.c.doc[("a", "b")]
    with engine.connect() as conn:
        # One statement naming one path several times and "doc" beside paths inside it, which
        # DynamoDB refuses side by side: the driver reads each from its attribute.
        row = conn.execute(
            select(
                element,
                element.as_string(),
                element.as_float(),
                element.as_numeric(10, 2),
                t.c.doc["l"][1].as_string(),
                t.c.doc["l"][0].as_boolean(),
                t.c.doc,
            ).where(t.c.pk == "A", t.c.sk == 1)
        ).one()
        assert conn.scalar(select(t.c.doc["missing"].as_integer()).where(t.c.pk == "A", t.c.sk == 1)) is None
        with pytest.raises(ValueError, match="'q' is not a JSON boolean"):
            conn.scalar(select(t.c.doc["l"][1].as_boolean()).where(t.c.pk == "A", t.c.sk == 1))
    assert tuple(row) == (1, "1", 1.0, Decimal("1.00"), "q", True, {"a": {"b": 1}, "l": [1, "q"]})
    assert [type(v) for v in row] == [int, str, float, Decimal, str, bool, dict]


def test_a_stored_null_is_unknown_to_negated_tests(table, raw):
    """boto3 writes None as a NULL attribute; SQL's NULL makes a negated test unknown (no row),
    where PartiQL's would be TRUE."""
    engine, t = table
    for sk, n in ((1, {"NULL": True}), (2, {"N": "5"}), (3, None), (4, {"N": "7"})):
        item = {"pk": {"S": "N"}, "sk": {"N": str(sk)}, "s": {"NULL": True} if sk == 1 else {"S": "ab"}}
        if n is not None:
            item["n"] = n
        raw.put_item(TableName=t.name, Item=item)
    try:
        with engine.connect() as conn:

            def matching(condition, ordered: bool = False) -> list[int]:
                query = select(t.c.sk).where(t.c.pk == "N", condition)
                return conn.scalars(query.order_by(t.c.sk) if ordered else query).all()

            assert matching(t.c.n != 5) == matching(t.c.n != 5, ordered=True) == [4]
            assert sorted(matching(t.c.n.not_in([5, 6]))) == [4]
            assert sorted(matching(~t.c.s.startswith("x"))) == [2, 3, 4]
            assert sorted(matching(~t.c.s.contains("a"))) == []
            assert sorted(matching(t.c.n.is_(None))) == [1, 3]
            assert sorted(matching(t.c.n.is_not(None))) == [2, 4]
    finally:
        for sk in range(1, 5):
            raw.delete_item(TableName=t.name, Key={"pk": {"S": "N"}, "sk": {"N": str(sk)}})


def test_a_json_path_in_an_executemany_is_refused_before_sending(table):
    """A path's steps are written into the text per execution (DynamoDB takes no parameter in a
    path): an executemany is refused with advice, nothing written; one row at a time runs."""
    engine, t = table
    statement = (
        update(t)
        .where(t.c.pk == bindparam("p"), t.c.sk == bindparam("k"), t.c.doc[("a", "b")].as_integer() == 1)
        .values(s=bindparam("v"))
    )
    rows = [{"p": "A", "k": 1, "v": "changed"}, {"p": "A", "k": 2, "v": "changed"}]
    with engine.connect() as conn:
        with pytest.raises(StatementError, match="cannot express a JSON path in an executemany") as raised:
            conn.execute(statement, rows)
        assert isinstance(raised.value.orig, CompileError)
        assert conn.execute(select(t.c.s).where(t.c.pk == "A", t.c.sk.in_([1, 2]))).scalars().all() == [
            "ab",
            "abc",
        ]
        assert [conn.execute(statement, row).rowcount for row in rows] == [1, 0]
        conn.execute(update(t).where(t.c.pk == "A", t.c.sk == 1).values(s="ab"))
        conn.commit()


def test_an_update_that_removes_writes_its_json_path_into_the_statement(table):
    """None REMOVEs an attribute, so the UPDATE is re-rendered per execution; the JSON path's
    steps in its WHERE must be written in (the placeholder itself was sent: outside a
    transaction DynamoDB ran it, inside one it refused the commit)."""
    engine, t = table
    sent: list[str] = []

    def record(conn, cursor, statement, *args) -> None:
        sent.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    path = t.c.doc[("a", "b")].as_integer()

    def remove_s(conn, sk: int, b: int) -> int:
        return conn.execute(update(t).where(t.c.pk == "A", t.c.sk == sk, path == b).values(s=None)).rowcount

    try:
        with engine.connect() as conn:
            assert [remove_s(conn, 1, 1), remove_s(conn, 2, 1)] == [1, 0]
            conn.commit()
        assert sent[-1] == (
            'UPDATE "conditions_live" REMOVE "s" WHERE "pk" = ? AND "sk" = ? AND ("doc"[\'a\'][\'b\'] = ?)'
        )
        with engine.begin() as conn:
            assert remove_s(conn, 3, 3) == 1
        with engine.connect() as conn:
            stored = conn.execute(select(t.c.sk, t.c.s).where(t.c.pk == "A", t.c.sk.in_([1, 2, 3])))
            assert sorted(stored) == [(1, None), (2, "abc"), (3, None)]
    finally:
        event.remove(engine, "before_cursor_execute", record)
        with engine.begin() as conn:
            for sk, value in ((1, "ab"), (3, "x")):
                conn.execute(update(t).where(t.c.pk == "A", t.c.sk == sk).values(s=value))
