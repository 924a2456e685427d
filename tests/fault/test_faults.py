"""No write lost, none applied twice: real botocore retries through a proxy that throttles,
fails and resets connections in front of DynamoDB Local. What is stored is read back directly."""

from __future__ import annotations

import math
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import Integer, String, Table, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from support.faultproxy import Faults

AUTOCOMMIT = {"isolation_level": "AUTOCOMMIT"}


def rows(count: int, partitions: int = 1, start: int = 0) -> list[dict]:
    return [
        {"pk": f"p{i % partitions:03}", "sk": f"{i:05}", "n": i, "name": f"row {i}"}
        for i in range(start, start + count)
    ]


def stored(engine: Engine, items: Table) -> list[tuple]:
    """Every item of the table as (pk, sk, n, name), sorted, read directly from DynamoDB Local."""
    with engine.connect().execution_options(dynamodb_scan="allow") as conn:
        return sorted(conn.execute(select(items.c.pk, items.c.sk, items.c.n, items.c.name)).all())


def as_tuples(written: list[dict]) -> list[tuple]:
    return sorted((r["pk"], r["sk"], r["n"], r["name"]) for r in written)


# -- bulk writes in AUTOCOMMIT -----------------------------------------------------------------

WRITES = 10_000
# botocore backs off up to rand(0, 1) * 2**i seconds after the i-th throttle in a row: one
# executemany of all 10,000 rows sleeps ~3 minutes under 30 % throttling (210 s measured).
# Eight writers, as eight application workers would be, sleep side by side; they take slices of
# 500 rows in turn, so one writer caught in a long run of throttles does not hold up the rest.
WRITERS = 8
SLICE = 500


def test_ten_thousand_inserts_under_throttling_and_resets_land_exactly_once(
    engine, items, start_proxy, through
):
    """Every request may be throttled (30 %) or reset before (1 %) or after (1 %) DynamoDB saw
    it; botocore retries. The table ends with exactly the rows sent, and no error is raised."""
    proxy = start_proxy(max_requests=3_000, time_limit=180)
    proxy.faults = Faults(throttle=0.30, reset_before=0.01, reset_after=0.01)
    proxied = through(proxy, retries=20)
    written = rows(WRITES, partitions=100)

    def write(part: list[dict]) -> int:
        with proxied.connect().execution_options(**AUTOCOMMIT) as conn:
            return conn.execute(insert(items), part).rowcount

    with ThreadPoolExecutor(WRITERS) as pool:
        rowcounts = list(pool.map(write, [written[i : i + SLICE] for i in range(0, WRITES, SLICE)]))
    assert sum(rowcounts) == WRITES
    # The faults really happened, including batches applied whose answer was lost.
    assert proxy.counts.faults["throttle", "BatchExecuteStatement"] > 0.2 * WRITES / 25
    assert proxy.counts.faults["reset_after", "BatchExecuteStatement"] > 0
    assert proxy.counts.faults["reset_before", "BatchExecuteStatement"] > 0
    assert stored(engine, items) == as_tuples(written)


def test_a_batch_applied_but_unanswered_is_resent_and_counted_once(engine, items, proxy, through):
    """The resent batch reports DuplicateItem for every row: each finds its item stored as sent,
    which is the earlier attempt's write, so the INSERT succeeded."""
    written = rows(30)
    proxy.script("BatchExecuteStatement", "reset_after")
    with through(proxy, retries=3).connect().execution_options(**AUTOCOMMIT) as conn:
        assert conn.execute(insert(items), written).rowcount == 30
    assert proxy.counts.forwarded["BatchExecuteStatement"] == 3  # the first chunk twice
    assert proxy.counts.requests["BatchGetItem"] == 1  # the first chunk's items read back
    assert stored(engine, items) == as_tuples(written)


def test_a_real_duplicate_in_a_resent_batch_is_still_an_integrity_error(engine, items, proxy, through):
    """Only an item stored exactly as sent counts as our own earlier write."""
    theirs = {"pk": "p000", "sk": "00003", "n": -3, "name": "theirs"}
    with engine.connect().execution_options(**AUTOCOMMIT) as conn:
        conn.execute(insert(items), [theirs])
    written = rows(5)
    proxy.script("BatchExecuteStatement", "throttle")  # resent by botocore, nothing applied
    with (
        through(proxy, retries=3).connect().execution_options(**AUTOCOMMIT) as conn,
        pytest.raises(IntegrityError, match=r"1 of 5 batched statements failed.*row 3: DuplicateItem"),
    ):
        conn.execute(insert(items), written)
    assert proxy.counts.requests["BatchGetItem"] == 1
    assert stored(engine, items) == as_tuples([*written[:3], theirs, *written[4:]])


# -- commits -----------------------------------------------------------------------------------


class Base(DeclarativeBase):
    pass


class Account(Base):
    __tablename__ = f"fault_accounts_{uuid.uuid4().hex[:6]}"
    pk: Mapped[str] = mapped_column(String, primary_key=True)
    balance: Mapped[int] = mapped_column(Integer)
    version: Mapped[int] = mapped_column(Integer, nullable=False)
    __mapper_args__ = {"version_id_col": version}


@pytest.fixture
def accounts(engine) -> Iterator[Engine]:
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add(Account(pk="acct", balance=100))
        session.commit()
    yield engine
    Base.metadata.drop_all(engine)


def deposit_and_open(engine: Engine) -> None:
    """One unit of work: a versioned UPDATE (balance + 1) and an INSERT, committed together."""
    with Session(engine) as session:
        session.get(Account, "acct").balance += 1
        session.add(Account(pk="new", balance=7))
        session.commit()


APPLIED_ONCE = [("acct", 101, 2), ("new", 7, 1)]


def accounts_stored(engine: Engine) -> list[tuple]:
    with Session(engine) as session:
        found = session.scalars(select(Account).execution_options(dynamodb_scan="allow")).all()
        return sorted((a.pk, a.balance, a.version) for a in found)


@pytest.mark.parametrize("fault", ["reset_after", "reset_before", "server_error", "throttle"])
def test_an_interrupted_commit_is_applied_once(accounts, proxy, through, fault):
    """A versioned UPDATE and an INSERT in one commit. Resent without its ClientRequestToken, the
    commit would fail: the version check (StaleDataError) and the INSERT (duplicate key)."""
    proxy.script("ExecuteTransaction", fault)
    deposit_and_open(through(proxy, retries=3))
    assert proxy.counts.requests["ExecuteTransaction"] == 2
    # After a reset DynamoDB saw the commit twice and applied it once.
    assert proxy.counts.forwarded["ExecuteTransaction"] == (2 if fault == "reset_after" else 1)
    assert accounts_stored(accounts) == APPLIED_ONCE


def test_a_commit_answered_too_late_is_applied_once(accounts, proxy, through):
    """The first attempt waits in the proxy past the client's read timeout; botocore resends it
    with the same token and DynamoDB applies that; the late first attempt arrives afterwards."""
    proxy.faults = Faults(delay_seconds=1.5)
    proxy.script("ExecuteTransaction", "delay")
    deposit_and_open(through(proxy, retries=3, read_timeout=0.5))
    deadline = time.monotonic() + 5
    while proxy.counts.forwarded["ExecuteTransaction"] < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proxy.counts.forwarded["ExecuteTransaction"] == 2
    assert accounts_stored(accounts) == APPLIED_ONCE


@pytest.mark.parametrize(("fault", "applied"), [("reset_after", True), ("server_error", False)])
def test_a_commit_left_unanswered_says_its_outcome_is_unknown(accounts, proxy, through, fault, applied):
    """Every attempt unanswered (a reset after DynamoDB got it, or a 500): the error says that
    the commit may have been applied and how to find out, and it was applied at most once."""
    proxy.script("ExecuteTransaction", fault, fault)
    with pytest.raises(OperationalError) as raised:
        deposit_and_open(through(proxy, retries=1))
    assert raised.value.orig.outcome_unknown
    assert re.search(r"outcome is unknown: DynamoDB may have applied all 2 writes or none", str(raised.value))
    assert re.search(r"ClientRequestToken was [0-9a-f]{32}", str(raised.value))
    assert accounts_stored(accounts) == (APPLIED_ONCE if applied else [("acct", 100, 1)])


def test_a_commit_refused_for_throttling_is_known_not_applied(accounts, proxy, through):
    proxy.script("ExecuteTransaction", "throttle", "throttle")
    with pytest.raises(OperationalError) as raised:
        deposit_and_open(through(proxy, retries=1))
    assert not raised.value.orig.outcome_unknown
    assert "outcome is unknown" not in str(raised.value)
    assert accounts_stored(accounts) == [("acct", 100, 1)]


# -- single statements ---------------------------------------------------------------------------


@pytest.mark.parametrize("fault", ["throttle", "server_error", "reset_before"])
def test_single_statements_are_retried_transparently(engine, items, proxy, through, fault):
    with engine.connect().execution_options(**AUTOCOMMIT) as conn:
        conn.execute(insert(items), rows(1))
    key = (items.c.pk == "p000", items.c.sk == "00000")
    with through(proxy, retries=3).connect().execution_options(**AUTOCOMMIT) as conn:
        proxy.script("ExecuteStatement", fault, fault)
        assert conn.execute(select(items.c.n).where(*key)).scalar_one() == 0
        proxy.script("ExecuteStatement", fault, fault)
        assert conn.execute(update(items).where(*key).values(n=1)).rowcount == 1
    assert proxy.counts.requests["ExecuteStatement"] == 6
    assert proxy.counts.faults[fault, "ExecuteStatement"] == 4
    assert stored(engine, items) == [("p000", "00000", 1, "row 0")]


def _select(conn, items: Table) -> None:
    conn.execute(select(items.c.n).where(items.c.pk == "p000", items.c.sk == "00000")).all()


def _update(conn, items: Table) -> None:
    conn.execute(update(items).where(items.c.pk == "p000", items.c.sk == "00000").values(n=99))


def _insert_many(conn, items: Table) -> None:
    conn.execute(insert(items), rows(30, start=1))


EXHAUSTED = {
    "select": (_select, AUTOCOMMIT),
    "update": (_update, AUTOCOMMIT),
    "executemany": (_insert_many, AUTOCOMMIT),
    "commit": (_insert_many, {}),
}


@pytest.fixture
def exhausted(engine, items, proxy, through) -> Callable[[str], OperationalError]:
    """``exhausted(name)`` runs one of EXHAUSTED with every request throttled and a single retry;
    it returns the error raised after checking that nothing reached DynamoDB."""
    with engine.connect().execution_options(**AUTOCOMMIT) as conn:
        conn.execute(insert(items), rows(1))
    proxy.faults = Faults(throttle=1.0)

    def run(name: str) -> OperationalError:
        action, options = EXHAUSTED[name]
        with (
            pytest.raises(OperationalError) as raised,
            through(proxy, retries=1).connect().execution_options(**options) as conn,
        ):
            action(conn, items)
            conn.commit()
        assert sum(proxy.counts.forwarded.values()) == 0
        assert stored(engine, items) == [("p000", "00000", 0, "row 0")]
        return raised.value

    return run


@pytest.mark.parametrize("name", list(EXHAUSTED))
def test_throttling_past_the_retries_is_an_operational_error_and_writes_nothing(exhausted, name):
    assert "ThrottlingException" in str(exhausted(name))


def test_throttling_past_the_retries_says_what_to_do(exhausted):
    assert re.search(r"max_attempts", str(exhausted("update")))


# -- API calls ---------------------------------------------------------------------------------


def test_api_calls_are_one_batch_per_25_inserts_and_one_transaction_per_commit(items, proxy, through):
    inserts = 260
    proxied = through(proxy, retries=0)
    with proxied.connect().execution_options(**AUTOCOMMIT) as conn:
        conn.execute(insert(items), rows(inserts))
    for start in range(1000, 1003):
        with proxied.begin() as conn:
            conn.execute(insert(items), rows(3, start=start * 10))
    with proxied.begin() as conn:  # reads only: nothing to commit, no transaction sent
        _select(conn, items)
    assert proxy.counts.requests == Counter(
        {"BatchExecuteStatement": math.ceil(inserts / 25), "ExecuteTransaction": 3, "ExecuteStatement": 1}
    )
