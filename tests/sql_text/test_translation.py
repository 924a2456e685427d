"""SQL text -> Core -> the one compiler: the exact PartiQL and parameters exec_driver_sql sends
(via explain: nothing is sent), refusals in the compiler's words, and the translation cache."""

from __future__ import annotations

import logging
import socket

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, text
from sqlalchemy.exc import CompileError, OperationalError, ProgrammingError

import sa_dynamo
from sa_dynamo import dbapi
from sa_dynamo.exc import TranslationError

from .conftest import explained

# (SQL text, the PartiQL sent, the parameters sent for ?-parameters "v0", "v1", ...).
# "items"/"users" stand for the module's tables.
TRANSLATED = [
    ("SELECT * FROM items", 'SELECT * FROM "items"', []),
    (
        "select pk, sk, n from items where pk = ?",
        'SELECT "pk", "sk", "n" FROM "items" WHERE "pk" = ?',
        ["v0"],
    ),
    (
        'SELECT "n", "$type", "a""b" FROM items WHERE pk = ? AND $type = \'X\'',
        'SELECT "n", "$type", "a""b" FROM "items" WHERE "pk" = ? AND ("$type" = ?)',
        ["v0", "X"],
    ),
    (
        'SELECT "doc"."a", doc.l[1] FROM items WHERE pk = ?',
        'SELECT "doc"[\'a\'], "doc"[\'l\'][1] FROM "items" WHERE "pk" = ?',
        ["v0"],
    ),
    # key conditions first, the rest in one group; parameters follow the statement
    (
        "SELECT * FROM items WHERE n = ? AND sk > ? AND pk = ?",
        'SELECT * FROM "items" WHERE "pk" = ? AND "sk" > ? AND ("n" = ?)',
        ["v2", "v1", "v0"],
    ),
    (
        "SELECT * FROM items WHERE n > ? AND pk = ? AND s = ? AND begins_with(sk, ?)",
        'SELECT * FROM "items" WHERE "pk" = ? AND begins_with("sk", ?) AND ("n" > ? AND "s" = ?)',
        ["v1", "v3", "v0", "v2"],
    ),
    (
        "SELECT * FROM items WHERE pk = ? AND sk BETWEEN ? AND ?",
        'SELECT * FROM "items" WHERE "pk" = ? AND "sk" BETWEEN ? AND ?',
        ["v0", "v1", "v2"],
    ),
    # LIKE 'prefix%' is begins_with; literals are parameters too
    (
        "SELECT * FROM items WHERE sk LIKE 'O''B%' AND pk = ?",
        'SELECT * FROM "items" WHERE "pk" = ? AND begins_with("sk", ?)',
        ["v0", "O'B"],
    ),
    ("SELECT * FROM items WHERE s LIKE '%'", 'SELECT * FROM "items" WHERE begins_with("s", ?)', [""]),
    # a key attribute IS NULL folds the WHERE to FALSE: nothing is sent (it shows in echo)
    ("SELECT * FROM items WHERE pk IS NULL", 'SELECT * FROM "items"', []),
    ("SELECT * FROM items WHERE pk IN (?, ?)", 'SELECT * FROM "items" WHERE "pk" IN [?, ?]', ["v0", "v1"]),
    (
        "SELECT * FROM items WHERE sk = ? AND pk IN (?, 'x')",
        'SELECT * FROM "items" WHERE "pk" IN [?, ?] AND "sk" = ?',
        ["v1", "x", "v0"],
    ),
    (
        "SELECT * FROM items WHERE ? = pk AND ? < sk",
        'SELECT * FROM "items" WHERE "pk" = ? AND "sk" > ?',
        ["v0", "v1"],
    ),
    (
        "SELECT * FROM items WHERE sk > ? AND n = ?",
        'SELECT * FROM "items" WHERE NOT (NOT ("sk" > ? AND "n" = ?))',
        ["v0", "v1"],
    ),
    (
        "SELECT * FROM items WHERE pk = ? AND (n < ? OR n > ?) AND s = ?",
        'SELECT * FROM "items" WHERE "pk" = ? AND (("n" < ? OR "n" > ?) AND "s" = ?)',
        ["v0", "v1", "v2", "v3"],
    ),
    (
        "SELECT * FROM items WHERE pk = ? OR pk = ?",
        'SELECT * FROM "items" WHERE ("pk" = ? OR "pk" = ?)',
        ["v0", "v1"],
    ),
    # SQL's three-valued logic: negations skip a missing or NULL attribute
    (
        "SELECT * FROM items WHERE pk = ? AND n <> ?",
        'SELECT * FROM "items" WHERE "pk" = ? AND (("n" <> ? AND attribute_exists("n") AND "n" <> NULL))',
        ["v0", "v1"],
    ),
    (
        "SELECT * FROM items WHERE pk = ? AND sk <> ?",
        'SELECT * FROM "items" WHERE "pk" = ? AND ("sk" <> ?)',
        ["v0", "v1"],
    ),
    # SQL's = NULL is never true (not SQLAlchemy's IS NULL): the execution answers no rows
    ("SELECT * FROM items WHERE NULL = s", 'SELECT * FROM "items" WHERE "s" = ?', [None]),
    (
        "SELECT * FROM items WHERE n NOT IN (?, ?)",
        'SELECT * FROM "items" WHERE (NOT "n" IN [?, ?] AND attribute_exists("n") AND "n" <> NULL)',
        ["v0", "v1"],
    ),
    (
        "SELECT * FROM items WHERE n NOT BETWEEN ? AND ?",
        'SELECT * FROM "items" WHERE ("n" < ? OR "n" > ?)',
        ["v0", "v1"],
    ),
    (
        "SELECT * FROM items WHERE NOT (n > ? AND (b OR s IS NULL))",
        'SELECT * FROM "items" WHERE "n" <= ? OR "b" = false AND (attribute_exists("s") AND "s" <> NULL)',
        ["v0"],
    ),
    ("SELECT * FROM items WHERE b", 'SELECT * FROM "items" WHERE "b" = true', []),
    (
        "SELECT * FROM items WHERE size(s) <> ?",
        'SELECT * FROM "items" WHERE (size("s") <> ? AND attribute_exists("s") AND "s" <> NULL)',
        ["v0"],
    ),
    (
        "SELECT * FROM items WHERE attribute_type(doc, 'M')",
        'SELECT * FROM "items" WHERE attribute_type("doc", ?)',
        ["M"],
    ),
    (
        "SELECT * FROM items WHERE s IS MISSING AND n IS NOT MISSING",
        'SELECT * FROM "items" WHERE NOT (NOT (attribute_not_exists("s") AND attribute_exists("n")))',
        [],
    ),
    ("SELECT * FROM items WHERE doc['a'][0] = ?", 'SELECT * FROM "items" WHERE "doc"[\'a\'][0] = ?', ["v0"]),
    (
        "SELECT * FROM items WHERE n = -5 AND b = TRUE AND pk = ?",
        'SELECT * FROM "items" WHERE "pk" = ? AND ("n" = ? AND "b" = ?)',
        ["v0", -5, True],
    ),
    # indexes: named, or chosen as for select()
    (
        "SELECT * FROM items.gsi1 WHERE n = ? AND gsi1sk > ? AND gsi1pk = ?",
        'SELECT * FROM "items"."gsi1" WHERE "gsi1pk" = ? AND "gsi1sk" > ? AND ("n" = ?)',
        ["v2", "v1", "v0"],
    ),
    (
        "SELECT * FROM items WHERE gsi1pk = ? AND gsi1sk > ? AND n = ?",
        'SELECT * FROM "items"."gsi1" WHERE "gsi1pk" = ? AND "gsi1sk" > ? AND ("n" = ?)',
        ["v0", "v1", "v2"],
    ),
    # gsi1 leaves out the items without gsi1sk, which this WHERE matches: the table is read
    (
        "SELECT * FROM items WHERE gsi1pk = ? AND n = ?",
        'SELECT * FROM "items" WHERE NOT (NOT ("gsi1pk" = ? AND "n" = ?))',
        ["v0", "v1"],
    ),
    # the condition lets gsi1 serve, and is TRUE for every item gsi1 holds
    (
        "SELECT * FROM items WHERE gsi1pk = ? AND gsi1sk IS NOT NULL",
        'SELECT * FROM "items"."gsi1" WHERE "gsi1pk" = ?',
        ["v0"],
    ),
    (
        "SELECT * FROM items.gsi1 WHERE gsi1pk = ? AND pk IN (?, ?) AND n > ?",
        'SELECT * FROM "items"."gsi1" WHERE "gsi1pk" = ? AND (NOT (NOT ("pk" IN [?, ?])) AND "n" > ?)',
        ["v0", "v1", "v2", "v3"],
    ),
    (
        "SELECT * FROM users WHERE n = ? AND id = ?",
        'SELECT * FROM "users" WHERE "id" = ? AND ("n" = ?)',
        ["v1", "v0"],
    ),
    # ORDER BY the sort key; DESC projects the partition key (DynamoDB Local needs it)
    (
        "SELECT sk FROM items WHERE pk = ? ORDER BY sk DESC",
        'SELECT "sk", "pk" FROM "items" WHERE "pk" = ? ORDER BY "sk" DESC',
        ["v0"],
    ),
    (
        "SELECT * FROM items WHERE pk = ? AND n NOT IN (?, 3) ORDER BY sk",
        'SELECT * FROM "items" WHERE "pk" = ? AND ((("n" <> ? AND "n" <> ?) AND attribute_exists("n") '
        'AND "n" <> NULL)) ORDER BY "sk"',
        ["v0", "v1", 3],
    ),
    # LIMIT is a row count the cursor applies; COUNT projects what it counts
    ("SELECT * FROM items WHERE pk = ? LIMIT 10", 'SELECT * FROM "items" WHERE "pk" = ?', ["v0"]),
    ("SELECT count(*) FROM items WHERE pk = ?", 'SELECT "pk" FROM "items" WHERE "pk" = ?', ["v0"]),
    ("SELECT sk AS x FROM items WHERE pk = ?", 'SELECT "sk" FROM "items" WHERE "pk" = ?', ["v0"]),
    # writes: NULL is an absent attribute (left out of INSERT, REMOVEd by UPDATE)
    (
        "INSERT INTO items (pk, sk, n, s) VALUES ('a', 'b', NULL, ?)",
        "INSERT INTO \"items\" VALUE {'pk': ?, 'sk': ?, 's': ?}",
        ["a", "b", "v0"],
    ),
    (
        "INSERT INTO \"items\" VALUE {'pk': ?, 'sk': ?, 'n': 5}",
        "INSERT INTO \"items\" VALUE {'pk': ?, 'sk': ?, 'n': ?}",
        ["v0", "v1", 5],
    ),
    (
        "UPDATE items SET n = ? REMOVE s WHERE sk = ? AND pk = ? AND n > ?",
        'UPDATE "items" SET "n" = ? REMOVE "s" WHERE "pk" = ? AND "sk" = ? AND ("n" > ?)',
        ["v0", "v2", "v1", "v3"],
    ),
    (
        "DELETE FROM items WHERE pk = ? AND sk = ? AND n = ? RETURNING ALL OLD *",
        'DELETE FROM "items" WHERE "pk" = ? AND "sk" = ? AND ("n" = ?) RETURNING ALL OLD *',
        ["v0", "v1", "v2"],
    ),
]


def _named(sql: str, tables) -> str:
    return sql.replace("items", tables.items.name).replace("users", tables.users.name)


@pytest.mark.parametrize(("sql", "partiql", "parameters"), TRANSLATED, ids=[t[0] for t in TRANSLATED])
def test_translation(engine, tables, sql, partiql, parameters):
    sent = explained(engine, _named(sql, tables), [f"v{i}" for i in range(sql.count("?"))])
    assert (sent.partiql, sent.parameters) == (_named(partiql, tables), parameters)


REFUSED = [
    ("SELECT pk, n FROM items GROUP BY pk", "the column n neither grouped nor aggregated"),
    ("SELECT * FROM items GROUP BY pk", "the literal column * in a SELECT computed on the client"),
    ("SELECT * FROM items JOIN users ON id = pk", "a JOIN with the table users as a name only (SQL text"),
    ("SELECT * FROM items WHERE pk IN (SELECT id FROM users)", "IN with a subquery, or EXISTS, in SQL text"),
    (
        "SELECT pk FROM items WHERE EXISTS (SELECT id FROM users)",
        "IN with a subquery, or EXISTS, in SQL text",
    ),
    ("SELECT * FROM items WHERE n IN s", "IN s (a list read from an item): list the values, as IN (?, ?)"),
    ("SELECT * FROM items UNION SELECT * FROM items", "UNION/INTERSECT/EXCEPT"),
    ("WITH x AS (SELECT * FROM items) SELECT * FROM x", "a common table expression (WITH)"),
    ("SELECT * FROM items WHERE lower(s) = ?", "the SQL function lower(): DynamoDB offers attribute_exists"),
    ("SELECT * FROM items WHERE n + 1 = ?", "the operator add"),
    ("SELECT * FROM items WHERE CASE WHEN n = 1 THEN TRUE ELSE FALSE END", "CASE: compute it in Python"),
    ("SELECT * FROM items WHERE CAST(n AS TEXT) = ?", "CAST"),
    ("SELECT * FROM items WHERE s ILIKE 'x%'", "the operator ilike_op"),
    ("SELECT * FROM items WHERE n = s", "a comparison of two attributes (n and s)"),
    ("SELECT * FROM items WHERE 1 = 1", "a comparison of two values"),
    ("SELECT 1 FROM items", "a value in the select list"),
    ("SELECT * FROM items t", "an alias (t)"),
    ("SELECT * FROM items WHERE items.n = ?", "PartiQL has no qualifiers"),
    ("UPDATE items SET sk = ? WHERE pk = ? AND sk = ?", 'an UPDATE of the key attribute "sk"'),
    ("UPDATE items SET doc.a = ? WHERE pk = ? AND sk = ?", "SET attribute = value for a whole attribute"),
    ("UPDATE items SET n = ? WHERE pk = ? AND sk = ? RETURNING ALL NEW *", "RETURNING, prefixes or hints"),
    ("UPDATE items.gsi1 SET n = ? WHERE pk = ? AND sk = ?", "a write to the index"),
    ("UPDATE items SET n = ? FROM users WHERE pk = ? AND sk = ?", "a multi-table UPDATE/DELETE"),
    ("DELETE FROM items WHERE pk = ? AND sk = ? RETURNING ALL NEW *", "RETURNING ALL NEW * on DELETE"),
    ("INSERT INTO items (pk) SELECT id FROM users", "INSERT ... SELECT"),
    ("INSERT INTO items (pk, sk) VALUES (?, ?), (?, ?)", "a multi-row VALUES clause"),
    ("INSERT INTO items (pk, sk) VALUES (?, ?) ON CONFLICT DO NOTHING", "INSERT ... ON CONFLICT"),
    ("SELECT * FROM items; SELECT * FROM users", "more than one statement"),
]


@pytest.mark.parametrize(("sql", "message"), REFUSED, ids=[sql for sql, _ in REFUSED])
def test_refusals_are_the_compilers(engine, tables, sql, message):
    with pytest.raises(TranslationError) as refused:
        explained(engine, _named(sql, tables), ["v"] * sql.count("?"))
    assert str(refused.value).startswith("DynamoDB PartiQL cannot express ")
    assert _named(message, tables) in str(refused.value)


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT * FROM", "column 10 ('SELECT * FROM'): the text ends after 'FROM', where a table name was"),
        (
            "SELECT * FROM items WHERE",
            "('SELECT * FROM items WHERE'): the text ends after 'WHERE', where a condition",
        ),
        ("SELECT * FROM items WHERE a ~ 'x'", "WHERE a ~'): '~' is not expected there"),
        (
            "SELECT * FROM items WHERE a = ? AND n * ",
            "the text ends after '*', where an expression was expected",
        ),
        ("SELECT * FROM items WHERE (a = 1 AND b = 2", "the text ends after '2', where ')' was expected"),
        (
            "SELECT *\nFROM items\nWHERE a = 1 AND AND b = 2",
            "line 3, column 17 ('WHERE a = 1 AND AND'): an expression was expected at 'AND'",
        ),
        ("SELEC * FROM items", "'SELEC' starts no statement; write SELECT, INSERT, UPDATE or DELETE"),
    ],
)
def test_parse_errors_say_where_and_what_was_expected(engine, tables, sql, message):
    with pytest.raises(TranslationError, match=r"^cannot parse the SQL text at line ") as refused:
        explained(engine, _named(sql, tables))
    assert _named(message, tables) in str(refused.value) and "\x1b" not in str(refused.value)


def test_sqlite_pragmas_are_named_as_sqlites(engine, tables):
    with pytest.raises(TranslationError, match=r"^PRAGMA is SQLite's: DynamoDB has no such settings"):
        explained(engine, "PRAGMA foreign_keys=ON")


def test_what_the_values_decide_is_checked_as_for_core(engine, tables):
    """LIKE patterns and empty key values are decided per execution, in the compiler's words."""
    like = _named("SELECT * FROM items WHERE pk = ? AND sk LIKE ?", tables)
    assert explained(engine, like, ["a", "O#%"]).parameters == ["a", "O#"]
    with pytest.raises(CompileError, match="cannot express LIKE '%x': DynamoDB matches a prefix only"):
        explained(engine, like, ["a", "%x"])
    everything = explained(engine, like, ["a", "%"])  # LIKE '%' holds for every key: no item lacks one
    assert (everything.partiql.endswith("(? = '')"), everything.parameters) == (True, ["a", ""])


def test_an_index_the_table_lacks_is_named(engine, tables):
    with pytest.raises(TranslationError, match=r"has no index 'nosuch' \(its indexes: gsi1, gsi2\)"):
        explained(engine, f"SELECT * FROM {tables.items.name}.nosuch WHERE pk = ?", ["a"])


def test_a_missing_table_is_one_clear_error(engine):
    with pytest.raises(ProgrammingError, match="table 'no_such_table' does not exist: create it first"):
        explained(engine, "SELECT * FROM no_such_table")


def test_an_unreachable_endpoint_is_one_operational_error():
    """DescribeTable fails while the text is translated: an OperationalError carrying the statement
    and the driver's error, on SQLAlchemy 2.0 too (which wraps SQLAlchemy's own errors raised
    there once more, in a StatementError)."""
    query = "SELECT * FROM notes WHERE pk = 'a'"
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts connections, never answers
        port = silent.getsockname()[1]
        engine = create_engine(f"dynamodb://127.0.0.1:{port}?max_attempts=1&read_timeout=0.5")
        try:
            with pytest.raises(OperationalError) as failed, engine.connect() as conn:
                conn.execute(text(query))
        finally:
            engine.dispose()
    assert failed.value.statement == query
    assert isinstance(failed.value.orig, dbapi.OperationalError)
    assert str(failed.value.orig).startswith("connection to DynamoDB failed: Read timeout")


def test_text_binds_keep_their_types_and_expanding_lists(engine, tables):
    from sqlalchemy import bindparam

    query = text(f"SELECT sk FROM {tables.items.name} WHERE pk IN :keys AND n > :n").bindparams(
        bindparam("keys", expanding=True), n=3
    )
    plan = sa_dynamo.explain(engine, query.bindparams(keys=["a", "b", "a"]))
    # the repeated key is read once, as the compiler reads an in_() list
    assert plan.partiql == f'SELECT "sk" FROM "{tables.items.name}" WHERE "pk" IN [?, ?] AND ("n" > ?)'


def test_translations_are_cached_per_text_and_key_schema(endpoint_url, table_name, caplog):
    """DescribeTable once per table, whatever the statements; DDL through the engine makes the
    next translation read the new key schema."""
    engine = create_engine(f"dynamodb://{endpoint_url.removeprefix('http://')}")
    first, second = MetaData(), MetaData()
    Table(table_name, first, Column("id", String, primary_key=True), Column("n", Integer))
    Table(
        table_name,
        second,
        Column("id", String, primary_key=True),
        Column("n", Integer, primary_key=True),
    )
    query = f"SELECT * FROM {table_name} WHERE id = ?"
    try:
        first.create_all(engine)
        with caplog.at_level(logging.DEBUG, logger="sa_dynamo.dbapi"):
            plans = [explained(engine, query, ["a"]).plan.operation for _ in range(3)]
            plans.append(explained(engine, f"SELECT n FROM {table_name} WHERE id = ?", ["a"]).plan.operation)
            described = sum("DescribeTable took" in r.getMessage() for r in caplog.records)
            first.drop_all(engine)
            second.create_all(engine)
            caplog.clear()
            plans.append(explained(engine, query, ["a"]).plan.operation)
            described_after = sum("DescribeTable took" in r.getMessage() for r in caplog.records)
        assert plans == ["GetItem", "GetItem", "GetItem", "GetItem", "Query"]
        assert (described, described_after) == (1, 1)
    finally:
        second.drop_all(engine)
        engine.dispose()
