"""statement.py: what the driver reads from PartiQL text (kind, projection keys, RETURNING).
The projection keys are checked against DynamoDB itself in test_cursor.py."""

from __future__ import annotations

import pytest

from sa_dynamo.dbapi import statement


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('SELECT * FROM "t"', "SELECT"),
        ("  select pk from t", "SELECT"),
        ("\n\tInsert INTO t VALUE {'pk': ?}", "INSERT"),
        ("-- a comment\nUPDATE t SET a = ? WHERE pk = ?", "UPDATE"),
        ("/* one\n two */ DELETE FROM t WHERE pk = ?", "DELETE"),
        ("-- c1\n/* c2 */\n  delete FROM t", "DELETE"),
        ('EXISTS(SELECT * FROM "t" WHERE pk = ?)', "EXISTS"),
        ("", ""),
        ("   ", ""),
    ],
)
def test_kind(text: str, expected: str) -> None:
    assert statement.kind(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('SELECT * FROM "t"', None),
        ("select  *  from t where pk = ?", None),
        ('SELECT "pk", "sk" FROM "t"', ["pk", "sk"]),
        ("select pk,sk from t", ["pk", "sk"]),
        ('SELECT "doc"."a" FROM "t"', ["a"]),
        ("SELECT doc.a.b FROM t", ["b"]),
        ('SELECT "a""b", "c" FROM "t"', ['a"b', "c"]),
        ('SELECT "x, y", "z" FROM "t"', ["x, y", "z"]),
        ('SELECT "l"[0], "doc"."l"[1] FROM "t"', ["l[0]", "l[1]"]),
        ('SELECT "m"."l"[0][1] FROM "t"', ["l[0][1]"]),
        ("SELECT doc['k'], doc['it''s'] FROM t", ["k", "it's"]),
        ("SELECT doc['a,b'], doc['x\"y'] FROM t", ["a,b", 'x"y']),
        ("SELECT doc['from'], \"b\" FROM t", ["from", "b"]),
        ('SELECT "from", "FROM x" FROM "t" WHERE "from" = ?', ["from", "FROM x"]),
        ("SELECT fromage, $type, my_from FROM t", ["fromage", "$type", "my_from"]),
        ('SELECT "my attr", "my-attr", "order" FROM "t"."gsi1"', ["my attr", "my-attr", "order"]),
        ('SELECT "é", "😀" FROM "t"', ["é", "😀"]),
    ],
)
def test_projection_keys_are_the_last_path_step(text: str, expected: list[str] | None) -> None:
    assert statement.projection(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DELETE FROM t WHERE pk = ? RETURNING ALL OLD *", True),
        ("delete from t where pk = ? returning all old * ;", True),
        ("UPDATE t SET a = ? WHERE pk = ?\nRETURNING MODIFIED NEW *", True),
        ("UPDATE t SET a = ? WHERE pk = ? RETURNING ALL NEW *", True),
        ("DELETE FROM t WHERE pk = ?", False),
        ('UPDATE t SET "returning" = ? WHERE pk = ?', False),
        ("UPDATE t SET a = ? WHERE pk = ? RETURNING ALL NEW a", False),
    ],
)
def test_has_returning(text: str, expected: bool) -> None:
    assert statement.has_returning(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DELETE FROM t WHERE pk = ? RETURNING ALL OLD *", "DELETE FROM t WHERE pk = ?"),
        ("DELETE FROM t WHERE pk = ?\n  returning all old *;", "DELETE FROM t WHERE pk = ?"),
        ("DELETE FROM t WHERE pk = ?", "DELETE FROM t WHERE pk = ?"),
    ],
)
def test_without_returning_old(text: str, expected: str) -> None:
    assert statement.without_returning_old(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('SELECT "a", "b" FROM "t"', None),
        ('SELECT "doc"."a", "doc"."b" FROM "t"', None),
        ('SELECT * FROM "t"', None),
        ('SELECT "a", "a" FROM "t" WHERE "pk" = ?', ('SELECT "a" FROM "t" WHERE "pk" = ?', [("a",), ("a",)])),
        ('SELECT "a", "doc"."a" FROM "t"', ('SELECT "a", "doc" FROM "t"', [("a",), ("doc", "a")])),
        (
            "select doc, doc['k'][0], l[1] from t",
            ('select "doc", "l" from t', [("doc",), ("doc", "k", 0), ("l", 1)]),
        ),
        ('SELECT "q""t", "q""t"."x" FROM "t"', ('SELECT "q""t" FROM "t"', [('q"t',), ('q"t', "x")])),
        (
            "SELECT doc['0'], doc[0], doc FROM t",
            ('SELECT "doc" FROM t', [("doc", "0"), ("doc", 0), ("doc",)]),
        ),
        ("SELECT a AS b, a FROM t", None),  # not plain paths: left to DynamoDB
        ("SELECT size(a), a FROM t", None),
    ],
)
def test_covering_projection(text: str, expected: tuple | None) -> None:
    assert statement.covering(text) == expected
