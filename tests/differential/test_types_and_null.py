"""Types and NULL at the edges, each case run by the same SQLAlchemy code on SQLite (the judge) and
on DynamoDB Local: the rows, rowcounts and final table agree, or DynamoDB refuses before sending.

Inside a transaction the items it wrote are tested by the Python predicate, and an UPDATE or
DELETE tests the item it reads first: the cases run there too, so both sides of the overlay
(DynamoDB's filter, the predicate) are judged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import (
    JSON,
    Column,
    Double,
    Engine,
    Float,
    Integer,
    MetaData,
    Numeric,
    String,
    Table,
    bindparam,
    create_engine,
    delete,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.exc import CompileError
from support.sent import requests_sent

from sa_dynamo import NumberSet, StringSet
from sa_dynamo.dialect.base import DynamoDBDialect
from sa_dynamo.dialect.compiler.predicate import values_of


@pytest.fixture
def engines(endpoint_url: str) -> Iterator[tuple[Engine, Engine]]:
    sqlite = create_engine("sqlite://")
    dynamodb = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}", dynamodb_scan="allow")
    yield sqlite, dynamodb
    sqlite.dispose()
    dynamodb.dispose()


def on_both(
    engines: tuple[Engine, Engine], table: Table, rows: list[dict], run: Callable[[Engine], Any]
) -> tuple[Any, Any]:
    """``run``'s result on SQLite and on DynamoDB, each over a fresh ``table`` holding ``rows``."""
    results = []
    for engine in engines:
        table.metadata.create_all(engine)
        try:
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.execute(insert(table), rows)
            results.append(run(engine))
        finally:
            table.metadata.drop_all(engine)
    return results[0], results[1]


def final(engine: Engine, table: Table) -> list[tuple]:
    with engine.connect() as conn:
        return sorted(conn.execute(select(table)).all())


def test_float_columns_compare_as_sent_inside_a_transaction(engines, table_name):
    """A Float, Double or Numeric(asdecimal=False) value is stored as the number its shortest
    repr says: compared with the same float, in a transaction too, it is equal."""
    t = Table(
        table_name,
        MetaData(),
        Column("id", Integer, primary_key=True),
        Column("x", Float),
        Column("d", Double),
        Column("m", Numeric(asdecimal=False)),
        Column("n", Integer),
    )
    committed = [
        {"id": 1, "x": 0.7, "d": 2.675, "m": 0.3, "n": 0},
        {"id": 2, "x": 0.1 + 0.2, "d": 1e-7, "m": 19.99, "n": 0},
    ]

    def run(engine: Engine) -> Any:
        with engine.begin() as conn:
            conn.execute(insert(t), {"id": 3, "x": 0.1, "d": 2.675, "m": 0.3, "n": 0})
            counts = [
                conn.execute(update(t).where(t.c.id == key, condition).values(n=5)).rowcount
                for key, condition in [
                    (1, t.c.x == 0.7),
                    (1, t.c.d == 2.675),
                    (2, t.c.x == 0.30000000000000004),
                    (2, t.c.m >= 19.99),
                    (3, t.c.x == 0.1),
                    (3, t.c.m <= 0.3),
                    (2, t.c.x == 0.3),  # 0.1 + 0.2 is not 0.3
                ]
            ]
            reads = [
                sorted(conn.scalars(select(t.c.id).where(condition)))
                for condition in [
                    t.c.x == 0.1,
                    t.c.x >= 0.1,
                    t.c.d == 2.675,
                    t.c.m.in_([0.3, 19.99]),
                    t.c.x.between(0.1, 0.7),
                    t.c.d != 1e-7,
                ]
            ]
        return counts, reads, final(engine, t)

    expected, actual = on_both(engines, t, committed, run)
    assert actual == expected
    assert expected[0] == [1, 1, 1, 1, 1, 1, 0]


@pytest.fixture
def strings(table_name: str) -> Table:
    return Table(
        table_name,
        MetaData(),
        Column("pk", String, primary_key=True),
        Column("sk", Integer, primary_key=True),
        Column("s", String),
        Column("n", Integer),
    )


STRING_ROWS = [
    {"pk": "a", "sk": 1, "s": "x", "n": 1},
    {"pk": "a", "sk": 2, "s": "y", "n": 2},
    {"pk": "a", "sk": 3, "s": None, "n": 3},
]


def test_none_in_in_lists(engines, strings):
    """SQL's x NOT IN (a, NULL) is never TRUE, and x IN (a, NULL) is x = a: outside and inside a
    transaction (whose own writes the predicate tests), in reads and in UPDATEs."""
    t = strings
    conditions = [
        t.c.s.not_in(["x", None]),
        t.c.s.not_in([None]),
        t.c.s.in_([None]),
        t.c.s.in_(["x", None]),
        ~t.c.s.in_(["x", None]),
        ~t.c.s.not_in(["z", None]),
        t.c.sk.in_([2, None]),
        t.c.sk.not_in([1, None]),
    ]

    sql = [
        f"SELECT sk FROM {t.name} WHERE pk = 'a' AND s {test}" for test in ("NOT IN ('x', NULL)", "IN (NULL)")
    ]

    def reads(conn: Any) -> list[list[int]]:
        return [sorted(conn.scalars(select(t.c.sk).where(t.c.pk == "a", c))) for c in conditions] + [
            sorted(conn.scalars(text(statement).columns(t.c.sk))) for statement in sql
        ]

    def run(engine: Engine) -> Any:
        with engine.connect() as conn:
            outside = reads(conn)
            counts = [
                conn.execute(update(t).where(t.c.pk == "a", t.c.sk == 2, c).values(n=9)).rowcount
                for c in (t.c.s.not_in(["x", None]), t.c.s.in_([None]), t.c.s.in_(["y", None]))
            ]
            conn.commit()
        with engine.begin() as conn:
            conn.execute(insert(t), {"pk": "a", "sk": 4, "s": "z", "n": 4})
            conn.execute(update(t).where(t.c.pk == "a", t.c.sk == 1).values(s="w"))
            inside = reads(conn)
            counts += [
                conn.execute(update(t).where(t.c.pk == "a", t.c.sk == 4, c).values(n=8)).rowcount
                for c in (t.c.s.not_in(["x", None]), t.c.s.in_([None]), t.c.s.in_(["z", None]))
            ]
            counts.append(
                conn.execute(delete(t).where(t.c.pk == "a", t.c.sk == 1, t.c.s.not_in([None]))).rowcount
            )
        return outside, inside, counts, final(engine, t)

    expected, actual = on_both(engines, t, STRING_ROWS, run)
    assert actual == expected
    assert expected[2] == [0, 0, 1, 0, 0, 1, 0]


def test_comparisons_with_a_none_parameter_are_never_true(engines, strings):
    """x = :p, x <> :p, x > :p, startswith(:p) ... with p None are unknown in SQL: no row, outside
    and inside a transaction, in reads and UPDATEs, Core and SQL text."""
    t = strings
    p = bindparam("p")
    conditions = [
        t.c.s == p,
        t.c.s != p,
        t.c.n > p,
        t.c.s.startswith(p),
        ~t.c.s.startswith(p),
        t.c.n.between(p, 5),
        ~t.c.n.between(p, 5),
        ~(t.c.s == p),
        t.c.sk != p,
    ]
    texts = [
        f"SELECT sk FROM {t.name} WHERE pk = 'a' AND {test}"
        for test in ("s <> :p", "n < :p", "s = NULL", "NULL <> s", "NOT (s = NULL)", "NOT (n >= NULL)")
    ]

    def reads(conn: Any) -> list[list[int]]:
        return [
            sorted(conn.scalars(select(t.c.sk).where(t.c.pk == "a", c), {"p": None})) for c in conditions
        ] + [sorted(conn.scalars(text(sql).columns(t.c.sk), {"p": None})) for sql in texts]

    def run(engine: Engine) -> Any:
        with engine.connect() as conn:
            outside = reads(conn)
            where = (t.c.pk == "a", t.c.sk == 2, t.c.s != p)
            counts = [conn.execute(update(t).where(*where).values(n=9), {"p": None}).rowcount]
            conn.commit()
        with engine.begin() as conn:
            conn.execute(insert(t), {"pk": "a", "sk": 4, "s": "z", "n": 4})
            inside = reads(conn)
            counts.append(
                conn.execute(delete(t).where(t.c.pk == "a", t.c.sk == 4, t.c.n != p), {"p": None}).rowcount
            )
        return outside, inside, counts, final(engine, t)

    expected, actual = on_both(engines, t, STRING_ROWS, run)
    assert actual == expected
    assert expected[2] == [0, 0]


def test_none_where_sql_answers_nothing_for_some_rows_only_is_refused_before_sending(engines, strings):
    """Below an OR the never-true test cannot be left out of the PartiQL, and an executemany
    sends one statement for every row: refused, nothing sent."""
    t = strings
    nested = select(t.c.sk).where(t.c.pk == "a", or_(t.c.s != bindparam("p"), t.c.n == 1))
    many = delete(t).where(t.c.pk == "a", t.c.sk == bindparam("k"), t.c.s != bindparam("p"))
    rows = [{"k": 1, "p": "y"}, {"k": 2, "p": None}]

    def run(engine: Engine) -> Any:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            if engine.dialect.name == "sqlite":
                return conn.scalars(nested, {"p": None}).all(), conn.execute(many, rows).rowcount
            refused = []
            with requests_sent(conn.connection.dbapi_connection) as sent:
                for statement, parameters in ((nested, {"p": None}), (many, rows)):
                    with pytest.raises(CompileError) as raised:
                        conn.execute(statement, parameters)
                    refused.append(str(raised.value).split(":")[0])
            return refused, sent, final(engine, t)

    (rows_matched, deleted), (refused, sent, kept) = on_both(engines, t, STRING_ROWS, run)
    assert (rows_matched, deleted) == ([1], 1)  # what SQL means, for the record
    assert refused == [
        "DynamoDB PartiQL cannot express a comparison with None below an OR",
        "DynamoDB PartiQL cannot express a comparison with None in an executemany",
    ]
    assert sent == []
    assert len(kept) == len(STRING_ROWS)


def test_none_in_a_list_below_an_or_is_refused_before_sending(engines, strings):
    """Below an OR a test that is never TRUE cannot be left out of the PartiQL: refused."""
    t = strings
    query = select(t.c.sk).where(t.c.pk == "a", or_(t.c.s.not_in(["x", None]), t.c.n == 1))

    def run(engine: Engine) -> Any:
        with engine.connect() as conn:
            if engine.dialect.name == "sqlite":
                return conn.scalars(query).all()
            connection = conn.connection.dbapi_connection
            refused = pytest.raises(CompileError, match="NOT IN with None in its list below an OR")
            with requests_sent(connection) as sent, refused:
                conn.execute(query)
            return sent

    rows, sent = on_both(engines, t, STRING_ROWS, run)
    assert rows == [1]
    assert sent == []


def test_count_of_a_where_that_matches_nothing_is_one_row_of_zero(engines, strings):
    """A WHERE the compiler or the execution knows matches nothing sends nothing, and COUNT
    still answers its one row, as SQL's does."""
    t = strings

    def run(engine: Engine) -> Any:
        with engine.connect() as conn:
            counts = [
                conn.execute(select(func.count()).select_from(t).where(*where)).all()
                for where in [
                    (t.c.pk == "a", t.c.sk.between(9, 1)),
                    (t.c.pk.is_(None),),
                    (t.c.pk == "a", t.c.sk.is_(None)),
                    (t.c.pk == "a", t.c.s.not_in(["y", None])),
                    (t.c.pk == "a", t.c.sk > 1),  # not empty: a control
                ]
            ]
            counts.append(conn.execute(select(func.count(t.c.s)).where(t.c.pk.is_(None))).all())
            for sql in (
                f"SELECT count(*) FROM {t.name} WHERE pk IS NULL",
                f"SELECT count(*) FROM {t.name} WHERE pk = 'a' AND sk BETWEEN 9 AND 1",
            ):
                counts.append(conn.execute(text(sql)).all())
        return counts

    expected, actual = on_both(engines, t, STRING_ROWS, run)
    assert actual == expected
    assert expected[0] == [(0,)]


def test_writes_whose_where_matches_nothing_count_zero(engines, strings):
    """An UPDATE or DELETE whose WHERE matches nothing counts 0 rows and sends nothing, in a
    transaction and in AUTOCOMMIT, one statement or an executemany."""
    t = strings
    nothing = [
        (t.c.pk == "a", t.c.sk == 1, t.c.pk.is_(None)),
        (t.c.pk == "a", t.c.sk.is_(None)),
        (t.c.pk.is_(None),),
        (t.c.pk == "a", t.c.sk == 1, t.c.s.not_in(["q", None])),
    ]

    def run(engine: Engine) -> Any:
        counts = []
        for level in ("AUTOCOMMIT", "SERIALIZABLE"):
            with engine.connect().execution_options(isolation_level=level) as conn:
                for where in nothing:
                    counts.append(conn.execute(update(t).where(*where).values(n=7)).rowcount)
                    counts.append(conn.execute(delete(t).where(*where)).rowcount)
                many = delete(t).where(t.c.pk == bindparam("p"), t.c.sk == bindparam("k"), t.c.pk.is_(None))
                counts.append(conn.execute(many, [{"p": "a", "k": 1}, {"p": "a", "k": 2}]).rowcount)
                conn.commit()
        return counts, final(engine, t)

    expected, actual = on_both(engines, t, STRING_ROWS, run)
    assert actual == expected
    assert set(expected[0]) == {0}


def test_the_predicate_of_a_comparison_with_none_selects_sqlites_rows(strings):
    """The Python predicate is exact where the PartiQL is refused (below an OR) too: a list with
    None, or a None value compared."""
    t = strings
    dialect = DynamoDBDialect()
    stored = [
        {"pk": "a", "sk": Decimal(row["sk"]), "n": Decimal(row["n"])} | ({"s": row["s"]} if row["s"] else {})
        for row in STRING_ROWS
    ]
    sqlite = create_engine("sqlite://")
    t.metadata.create_all(sqlite)
    with sqlite.begin() as conn:
        conn.execute(insert(t), STRING_ROWS)
        for condition in [
            t.c.s.not_in(["x", None]),
            or_(t.c.s.not_in(["x", None]), t.c.n == 1),
            or_(t.c.s.in_([None]), t.c.n == 2),
            ~or_(t.c.s.in_(["y", None]), t.c.n == 1),
            t.c.s.in_(["x", None]),
            or_(t.c.s != bindparam("p", None), t.c.n == 1),
            ~t.c.s.startswith(bindparam("p", None)),
            ~t.c.n.between(bindparam("p", None), 2),
        ]:
            query = select(t.c.sk).where(condition)
            compiled = query.compile(dialect=dialect)
            values = values_of(compiled, compiled.construct_params())
            matched = sorted(int(item["sk"]) for item in stored if compiled.record.predicate(item, values))
            assert matched == sorted(conn.scalars(query)), str(condition)


def test_documents_and_sets_compare_inside_a_transaction_as_dynamodb_does(engine, table_name):
    """SQLite has no sets and compares JSON as text, so DynamoDB judges its own: an item the
    transaction wrote matches a whole-value comparison exactly where its committed twin does."""
    t = Table(
        table_name,
        MetaData(),
        Column("pk", String, primary_key=True),
        Column("tags", StringSet),
        Column("nums", NumberSet),
        Column("doc", JSON),
    )
    doc = {"k": 1, "n": None, "l": [1, "a"]}
    rows = [
        {"pk": "a", "tags": {"x", "y"}, "nums": {1, Decimal("2.5")}, "doc": doc},
        {"pk": "b", "tags": {"x"}, "nums": {2}, "doc": [1, True]},
    ]
    conditions = [
        t.c.tags == {"y", "x"},
        t.c.nums == {2.5, 1},
        t.c.doc == {"k": 1.0, "n": None, "l": [1, "a"]},
        t.c.doc == {"k": True, "n": None, "l": [1, "a"]},
        t.c.doc == {"k": 1, "l": [1, "a"]},
        t.c.doc == [1, True],
        t.c.doc == [1, 1],
        t.c.doc != doc,
    ]
    t.create(engine)
    try:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT", dynamodb_scan="allow") as conn:
            conn.execute(insert(t), rows)
            committed = [sorted(conn.scalars(select(t.c.pk).where(c))) for c in conditions]
        with engine.begin() as conn:
            conn.execute(insert(t), [{**row, "pk": row["pk"] + "2"} for row in rows])
            scan = conn.execution_options(dynamodb_scan="allow")
            written = [sorted(scan.scalars(select(t.c.pk).where(c))) for c in conditions]
            conn.rollback()
    finally:
        t.drop(engine)
    assert written == [sorted(keys + [key + "2" for key in keys]) for keys in committed]
    assert committed == [["a"], ["a"], ["a"], [], [], ["b"], [], ["b"]]  # DynamoDB's answers, for the record
