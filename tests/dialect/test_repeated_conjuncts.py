"""A WHERE that repeats a test (SQLAlchemy's join to a ``with_polymorphic(..., aliased=True)``
alias sends the discriminator filter three times) keeps every copy: two copies with equal
values now are two parameters to SQLAlchemy's statement cache, and the compiled text is reused
for a statement of the same shape whose values differ. Dropping a copy at compile time would
answer that statement with the other's rows."""

from __future__ import annotations

from sqlalchemy import create_engine, insert, select

from tests.support.sent import bodies_sent


def test_a_repeated_test_is_sent_as_written_and_a_cached_compile_keeps_both(engine, items):
    sqlite = create_engine("sqlite://")
    items.metadata.create_all(sqlite)
    rows = [{"pk": "p", "sk": sk, "n": n, "name": name} for sk, n, name in [("1", 1, "x"), ("2", 2, "y")]]
    for each in (engine, sqlite):
        with each.begin() as connection:
            connection.execute(insert(items), rows)

    def names(each, first: str, second: str) -> list[str]:
        statement = (
            select(items.c.name)
            .where(items.c.pk == "p", items.c.name.in_([first]), items.c.name.in_([second]))
            .order_by(items.c.sk)
        )
        with each.connect() as connection:
            return connection.scalars(statement).all()

    for first, second, expected in [("x", "x", ["x"]), ("x", "y", []), ("y", "y", ["y"])]:
        assert names(engine, first, second) == names(sqlite, first, second) == expected
    with engine.connect() as connection, bodies_sent(connection, "ExecuteStatement") as bodies:
        connection.scalars(
            select(items.c.name).where(items.c.pk == "p", items.c.name.in_(["x"]), items.c.name.in_(["x"]))
        ).all()
    assert [b["Statement"] for b in bodies] == [
        f'SELECT "name" FROM "{items.name}" WHERE "pk" = ? AND ("name" IN [?] AND "name" IN [?])'
    ]
    sqlite.dispose()
