"""Reading in rows, not in DynamoDB's items evaluated: LIMIT, first(), COUNT, paginate(), and
ORDER BY ... DESC over a partition of many pages (DynamoDB Local pages it upwards)."""

from __future__ import annotations

import math

import pytest
from sqlalchemy import Column, Index, Integer, MetaData, String, Table, create_engine, func, or_, select
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import DeclarativeBase, Session
from support.sent import observed

import sa_dynamo
from sa_dynamo.exc import InvalidPageToken, ScanNotAllowed

metadata = MetaData()
events = Table(
    "reading_events",
    metadata,
    Column("pk", String, primary_key=True),
    Column("sk", Integer, primary_key=True),
    Column("kind", String),
    Column("n", Integer),
    Column("g", String),
    Index("by_g", "g", "sk"),
)
ROWS = [
    {"pk": "A", "sk": i, "kind": "odd" if i % 2 else "even", "n": None if i % 5 == 0 else i, "g": "G"}
    for i in range(60)
]


class Base(DeclarativeBase):
    pass


class Event(Base):
    __table__ = events


@pytest.fixture(scope="module", autouse=True)
def loaded(engine):
    metadata.create_all(engine)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(events.insert(), ROWS)
    yield
    metadata.drop_all(engine)


@pytest.fixture(scope="module")
def sqlite():
    """The judge: SQLite holding the same rows."""
    judge = create_engine("sqlite://")
    metadata.create_all(judge)
    with judge.begin() as conn:
        conn.execute(events.insert(), ROWS)
    yield judge
    judge.dispose()


@pytest.fixture
def requests(engine):
    """ExecuteStatement requests sent, as boto3 saw them (tests use one pooled connection)."""
    with engine.connect() as conn:
        connection = conn.connection.dbapi_connection
    with observed(
        connection, lambda operation, body, _: body if operation == "ExecuteStatement" else None
    ) as seen:
        yield seen


def test_first_reads_one_page(engine, requests):
    with engine.connect().execution_options(dynamodb_page_size=10) as conn:
        assert conn.execute(select(events.c.sk).where(events.c.pk == "A")).first() == (0,)
    assert len(requests) == 1


def test_limit_with_a_selective_filter_reads_several_pages(engine, requests):
    query = select(events.c.sk).where(events.c.pk == "A", events.c.kind == "odd", events.c.sk > 20).limit(5)
    with engine.connect().execution_options(dynamodb_page_size=4) as conn:
        assert conn.scalars(query).all() == [21, 23, 25, 27, 29]
    assert len(requests) > 2


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (select(func.count()).select_from(events).where(events.c.pk == "A"), 60),
        (select(func.count("*")).select_from(events).where(events.c.pk == "A", events.c.kind == "odd"), 30),
        (select(func.count(events.c.n)).where(events.c.pk == "A"), 48),
        (select(func.count()).select_from(events).where(events.c.pk == "nobody"), 0),
    ],
)
def test_count_pages_through_every_item(engine, query, expected):
    with engine.connect().execution_options(dynamodb_page_size=7) as conn:
        assert conn.scalar(query) == expected


def test_count_obeys_the_scan_guard(engine):
    with engine.connect().execution_options(dynamodb_scan="error") as conn, pytest.raises(ScanNotAllowed):
        conn.scalar(select(func.count()).select_from(events))


def test_count_beside_a_column_neither_grouped_nor_aggregated_is_refused(engine):
    from sqlalchemy.exc import CompileError

    with engine.connect() as conn, pytest.raises(CompileError, match="the column kind neither grouped nor"):
        conn.execute(select(events.c.kind, func.count()).where(events.c.pk == "A"))


def pages_of(bind, query, size: int, **kwargs) -> list[list]:
    pages, token = [], None
    while True:
        page = sa_dynamo.paginate(bind, query, page_size=size, after=token, **kwargs)
        pages.append(page.rows)
        token = page.next
        if token is None:
            return pages


def test_paginate_gives_every_row_once_in_exact_pages(engine):
    query = select(events.c.sk).where(events.c.pk == "A", events.c.kind == "even")
    pages = pages_of(engine, query, 7)
    flat = [row.sk for page in pages for row in page]
    assert flat == list(range(0, 60, 2))
    assert [len(p) for p in pages[:-1]] == [7] * (len(pages) - 1)


@pytest.mark.parametrize(
    ("where", "size", "expected"),
    [
        (events.c.sk < 4, 2, [[0, 1], [2, 3]]),
        (events.c.sk < 4, 4, [[0, 1, 2, 3]]),
        (
            events.c.kind == "even",
            10,
            [list(range(0, 20, 2)), list(range(20, 40, 2)), list(range(40, 60, 2))],
        ),
        (events.c.sk.in_([57, 58]), 2, [[57, 58]]),  # items evaluated, none matching, follow
    ],
    ids=["key range", "one page", "filter", "filter, the last items not matching"],
)
def test_a_full_last_page_hands_out_no_token(engine, where, size, expected):
    pages = pages_of(engine, select(events.c.sk).where(events.c.pk == "A", where), size)
    assert [[row.sk for row in page] for page in pages] == expected


def test_paginate_orm_objects(engine):
    with Session(engine) as session:
        query = select(Event).where(Event.pk == "A", Event.sk < 10)
        pages = pages_of(session, query, 4)
    assert [[e.sk for e in page] for page in pages] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert all(isinstance(e, Event) for page in pages for e in page)


@pytest.mark.parametrize("limit", [0, 1, 4, 11, 60, 70])
@pytest.mark.parametrize("page_size", [1, 3, 7])
def test_a_limit_bounds_the_rows_of_all_pages_together(engine, sqlite, limit, page_size):
    query = select(events.c.sk).where(events.c.pk == "A", events.c.kind == "even").limit(limit)
    with sqlite.connect() as conn:
        expected = conn.scalars(query.order_by(events.c.sk)).all()
    pages = [[row.sk for row in page] for page in pages_of(engine, query, page_size)]
    assert [sk for page in pages for sk in page] == expected
    assert all(len(page) <= page_size for page in pages)
    # the LIMIT or the rows end the result: no page after it, one empty page for LIMIT 0
    assert len(pages) == max(1, math.ceil(len(expected) / page_size))


def test_page_tokens_are_bound_and_signed(engine):
    query = select(events.c.sk).where(events.c.pk == "A")
    first = sa_dynamo.paginate(engine, query, page_size=5, secret="s1")
    body, signature = first.next.rsplit(".", 1)
    tampered = body[:-2] + ("AA" if body[-2:] != "AA" else "BB") + "." + signature
    with pytest.raises(InvalidPageToken, match="altered"):
        sa_dynamo.paginate(engine, query, page_size=5, after=tampered, secret="s1")
    with pytest.raises(InvalidPageToken, match="another secret"):
        sa_dynamo.paginate(engine, query, page_size=5, after=first.next, secret="s2")
    other = select(events.c.sk).where(events.c.pk == "B")
    with pytest.raises(InvalidPageToken, match="another query"):
        sa_dynamo.paginate(engine, other, page_size=5, after=first.next, secret="s1")
    second = sa_dynamo.paginate(engine, query, page_size=5, after=first.next, secret="s1")
    assert [r.sk for r in second.rows] == [5, 6, 7, 8, 9]


def test_consistent_read_on_a_global_index_is_refused_before_sending(engine, requests):
    query = select(events.c.pk, events.c.sk).where(events.c.g == "G")
    with engine.connect().execution_options(dynamodb_consistent_read=True) as conn:
        with pytest.raises(ArgumentError, match="not available on a global secondary index"):
            conn.execute(query)
        assert conn.scalars(select(events.c.sk).where(events.c.pk == "A", events.c.sk == 3)).all() == [3]
    assert [r.get("ConsistentRead") for r in requests] == [True]


@pytest.fixture
def batches_of_any_size(monkeypatch):
    """Streamed reads ask for pages of exactly the batch size, even below the usual floor."""
    monkeypatch.setattr("sa_dynamo.dialect.execution.MIN_STREAM_PAGE", 1)
    monkeypatch.setattr("sa_dynamo.dialect.execution.STREAM_BATCHES_PER_PAGE", 1)


def test_a_streamed_result_asks_for_pages_of_one_batch(engine, requests, batches_of_any_size):
    query = select(Event).where(Event.pk == "A").execution_options(yield_per=25)
    with Session(engine) as session:
        assert [e.sk for e in session.scalars(query)] == list(range(60))
    assert [r.get("Limit") for r in requests] == [25, 25, 25]


def test_a_streamed_result_keeps_limit_a_row_count(engine, requests, batches_of_any_size):
    query = select(events.c.sk).where(events.c.pk == "A", events.c.kind == "odd").limit(20)
    with engine.connect().execution_options(yield_per=15) as conn:
        assert conn.scalars(query).all() == list(range(1, 40, 2))
    assert {r.get("Limit") for r in requests} == {15}


@pytest.mark.parametrize(
    ("options", "limit"),
    [
        ({}, None),
        ({"stream_results": True}, 10_000),
        ({"stream_results": True, "max_row_buffer": 200}, 2000),
        ({"yield_per": 5}, 1000),
        ({"yield_per": 30, "dynamodb_page_size": 7}, 7),
    ],
)
def test_the_page_a_streamed_result_asks_for(engine, requests, options, limit):
    with engine.connect().execution_options(**options) as conn:
        assert len(conn.execute(select(events.c.sk).where(events.c.pk == "A")).all()) == 60
    assert requests[0].get("Limit") == limit


def test_an_or_of_partition_keys_is_a_query_that_reads_each_partition_once(engine, requests):
    """pk = a OR pk = b is DynamoDB's Query on both partitions; a repeated value is read once
    (DynamoDB Local returns the partitions of an IN list's repeats twice, but an OR's once)."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(events.insert(), [{"pk": "B", "sk": i, "kind": "odd"} for i in range(3)])
    query = select(events.c.pk, events.c.sk).where(
        or_(events.c.pk == "B", events.c.pk == "B", events.c.pk == "none"), events.c.sk < 2
    )
    plan = sa_dynamo.explain(engine, query)
    # After an OR of partition keys DynamoDB Local drops sort-key tests (with a filter beside
    # them); beside a sort-key condition the OR is an IN, which keeps it and reads a repeated
    # partition once (docs/partiql-findings.md).
    assert (plan.operation, plan.key_condition, plan.filter) == (
        "Query",
        '"pk" IN [?, ?, ?] AND "sk" < ?',
        "",
    )
    whole = select(events.c.pk, events.c.sk).where(or_(events.c.pk == "B", events.c.pk == "B"))
    plan = sa_dynamo.explain(engine, whole)
    assert (plan.operation, plan.key_condition, plan.filter) == ("Query", '("pk" = ? OR "pk" = ?)', "")
    with engine.connect().execution_options(dynamodb_scan="error") as conn:
        assert sorted(conn.execute(query).all()) == [("B", 0), ("B", 1)]
        assert sorted(conn.execute(whole).all()) == [("B", 0), ("B", 1), ("B", 2)]
        pinned = [
            select(events.c.pk, events.c.sk).where(
                events.c.pk == pk, events.c.sk == 1, events.c.kind == "odd"
            )
            for pk in ("A", "B")
        ]
        expected = sorted(row for statement in pinned for row in conn.execute(statement))
        filtered = select(events.c.pk, events.c.sk).where(
            or_(events.c.pk == "B", events.c.pk == "A"), events.c.sk == 1, events.c.kind == "odd"
        )
        assert sorted(conn.execute(filtered).all()) == expected
        assert ("B", 1) in expected


@pytest.fixture
def unjudged(engine):
    """An engine whose connection has not yet read a descending order over several pages, so
    it does not know how its server pages one."""
    fresh = create_engine(engine.url)
    yield fresh
    fresh.dispose()


DESCENDING = {
    "partition": select(events.c.sk).where(events.c.pk == "A").order_by(events.c.sk.desc()),
    "filtered": select(events.c.n)
    .where(events.c.pk == "A", events.c.kind == "odd", events.c.sk < 50)
    .order_by(events.c.sk.desc()),
    "index": select(events.c.sk, events.c.kind).where(events.c.g == "G").order_by(events.c.sk.desc()),
}


@pytest.mark.parametrize("query", DESCENDING.values(), ids=DESCENDING.keys())
@pytest.mark.parametrize("limit", [None, 1, 5])
@pytest.mark.parametrize("page_size", [None, 1, 7])
def test_descending_order_over_many_pages_gives_sqlites_rows(unjudged, sqlite, query, limit, page_size):
    """The first read of a connection judges how its server pages a descending read (DynamoDB
    Local: upwards), the second is read knowing it: both give SQLite's rows."""
    query = query.limit(limit)
    with sqlite.connect() as conn:
        expected = conn.execute(query).all()
    with unjudged.connect().execution_options(dynamodb_page_size=page_size) as conn:
        assert conn.execute(query).all() == expected
        assert conn.execute(query).all() == expected


@pytest.mark.parametrize(
    "query",
    [
        select(events.c.n).where(events.c.pk == "A", events.c.sk.between(9, 1)).order_by(events.c.sk.desc()),
        select(events.c.kind).where(events.c.pk == "A", events.c.sk.between(9, 1)).order_by(events.c.n),
    ],
    ids=["descending", "sorted-here"],
)
def test_a_read_known_to_be_empty_has_only_the_selected_columns(engine, sqlite, query):
    """Nothing is sent; the keys read to order by are not columns of the result."""
    with sqlite.connect() as conn:
        expected = conn.execute(query)
        expected = (list(expected.keys()), expected.all())
    with engine.connect().execution_options(dynamodb_client_sort=100) as conn:
        result = conn.execute(query)
        assert (list(result.keys()), result.all()) == expected


def test_paginate_of_a_descending_order_gives_sqlites_rows_in_exact_pages(unjudged, sqlite):
    query = DESCENDING["partition"]
    with sqlite.connect() as conn:
        expected = conn.scalars(query).all()
        limited = conn.scalars(query.limit(10)).all()
    for _judged_on_the_first_page in (False, True):  # one connection: judging its server, knowing it
        pages = [[row.sk for row in page] for page in pages_of(unjudged, query, 7)]
        assert [sk for page in pages for sk in page] == expected
        assert [len(page) for page in pages] == [7] * 8 + [4]
        assert [[row.sk for row in page] for page in pages_of(unjudged, query.limit(10), 7)] == [
            limited[:7],
            limited[7:],
        ]


def test_a_descending_read_in_a_transaction_that_wrote_elsewhere_is_in_order(engine, sqlite):
    """The transaction's writes are laid over every page of the read; none of them is in it."""
    query = DESCENDING["filtered"].limit(4)
    with sqlite.connect() as conn:
        expected = conn.execute(query).all()
    with engine.connect().execution_options(dynamodb_page_size=3) as conn:
        conn.execute(events.insert().values(pk="elsewhere", sk=1))
        assert conn.execute(query).all() == expected
        conn.rollback()


def test_descending_order_over_pages_of_a_megabyte(engine, unjudged):
    """Without a page size DynamoDB ends a page at 1 MB: a partition of 2 MB is two pages."""
    pad = "x" * 300_000
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(events.insert(), [{"pk": "MB", "sk": i, "kind": pad} for i in range(7)])
    query = select(events.c.sk).where(events.c.pk == "MB").order_by(events.c.sk.desc())
    with unjudged.connect() as conn:
        assert conn.scalars(query.limit(3)).all() == [6, 5, 4]
        assert conn.scalars(query).all() == [6, 5, 4, 3, 2, 1, 0]
