"""The exact PartiQL each Core construct compiles to, and the CompileError for each refusal."""

from __future__ import annotations

import warnings

import pytest
from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    and_,
    case,
    cast,
    func,
    literal_column,
    not_,
    or_,
    select,
    tuple_,
    union,
)
from sqlalchemy.exc import ArgumentError, CompileError, SADeprecationWarning

from sa_dynamo import StringSet, use_index
from sa_dynamo.dialect.base import DynamoDBDialect
from sa_dynamo.dialect.compiler import empty_lists_decided, like_prefix

dialect = DynamoDBDialect()
metadata = MetaData()
items = Table(
    "items",
    metadata,
    Column("pk", String, primary_key=True),
    Column("sk", String, primary_key=True),
    Column("n", Integer),
    Column("name", String),
    Column("doc", JSON),
)
other = Table("other", metadata, Column("id", String, primary_key=True), Column("items_pk", String))
hash_only = Table("hash_only", metadata, Column("id", String, primary_key=True), Column("v", Integer))

ALL = 'SELECT "pk", "sk", "n", "name", "doc" FROM "items"'


def partiql(statement) -> str:
    return statement.compile(dialect=dialect).string


def params(statement) -> list:
    compiled = statement.compile(dialect=dialect)
    return [compiled.params[name] for name in compiled.positiontup]


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        (select(items), ALL),
        (select(items.c.sk, items.c.n), 'SELECT "sk", "n" FROM "items"'),
        (select(items).where(items.c.pk == "A"), ALL + ' WHERE "pk" = ?'),
        (
            select(items).where(items.c.pk == "A", items.c.sk == "1"),
            ALL + ' WHERE "pk" = ? AND "sk" = ?',
        ),
        (
            select(items).where(items.c.n == 5, items.c.sk > "1", items.c.pk == "A"),
            ALL + ' WHERE "pk" = ? AND "sk" > ? AND ("n" = ?)',
        ),
        (
            select(items).where(items.c.pk == "A", items.c.n >= 1, items.c.name == "x"),
            ALL + ' WHERE "pk" = ? AND ("n" >= ? AND "name" = ?)',
        ),
        (
            select(items).where(items.c.pk == "A", items.c.sk.between("1", "5")),
            ALL + ' WHERE "pk" = ? AND "sk" BETWEEN ? AND ?',
        ),
        (
            select(items).where(items.c.pk == "A", items.c.sk.startswith("ORDER#")),
            ALL + ' WHERE "pk" = ? AND begins_with("sk", ?)',
        ),
        (
            select(items).where(items.c.pk.in_(["A", "B"])),
            ALL + ' WHERE "pk" IN [__[POSTCOMPILE_pk_1]]',
        ),
        (
            select(items).where(items.c.pk == "A", items.c.n != 3),
            ALL + ' WHERE "pk" = ? AND (("n" <> ? AND attribute_exists("n") AND "n" <> NULL))',
        ),
        (
            select(items).where(items.c.name.is_(None)),
            ALL + ' WHERE ("name" IS NULL OR "name" IS MISSING)',
        ),
        (
            select(items).where(items.c.name.is_not(None)),
            ALL + ' WHERE (attribute_exists("name") AND "name" <> NULL)',
        ),
        (
            select(items).where(items.c.n.not_in([1, 2])),
            ALL + ' WHERE (NOT "n" IN [__[POSTCOMPILE_n_1]] AND attribute_exists("n") AND "n" <> NULL)',
        ),
        (
            select(items).where(items.c.pk == "A", or_(items.c.n < 1, items.c.n > 9), items.c.name == "x"),
            ALL + ' WHERE "pk" = ? AND (("n" < ? OR "n" > ?) AND "name" = ?)',
        ),
        (
            select(items).where(or_(items.c.pk == "A", items.c.pk == "B")),
            ALL + ' WHERE ("pk" = ? OR "pk" = ?)',  # a Query on both partitions
        ),
        (
            select(items).where(and_(items.c.n > 1, items.c.n < 9)),
            ALL + ' WHERE NOT (NOT ("n" > ? AND "n" < ?))',
        ),
        # the sort key only counts as a key condition next to partition-key equality
        (
            select(items).where(items.c.sk > "1", items.c.n == 1),
            ALL + ' WHERE NOT (NOT ("sk" > ? AND "n" = ?))',
        ),
        # SQLAlchemy folds NOT (a = b) into a <> b, which keeps SQL's three-valued logic here
        (
            select(items).where(not_(items.c.n == 1)),
            ALL + ' WHERE ("n" <> ? AND attribute_exists("n") AND "n" <> NULL)',
        ),
        (
            select(items).where(~items.c.name.startswith("a")),
            ALL + ' WHERE (NOT begins_with("name", ?) AND attribute_exists("name") AND "name" <> NULL)',
        ),
        (
            select(items).where(items.c.pk == "A").order_by(items.c.sk),
            ALL + ' WHERE "pk" = ? ORDER BY "sk"',
        ),
        (
            select(items).where(items.c.pk == "A").order_by(items.c.sk.desc()),
            ALL + ' WHERE "pk" = ? ORDER BY "sk" DESC',
        ),
        (select(items).where(items.c.pk == "A").limit(10), ALL + ' WHERE "pk" = ?'),
        (
            select(items.c.pk.label("partition")).where(items.c.pk == "A"),
            'SELECT "pk" FROM "items" WHERE "pk" = ?',
        ),
        (
            select(func.count()).select_from(items).where(items.c.n > 1),
            'SELECT "pk" FROM "items" WHERE "n" > ?',
        ),
        (
            select(func.count(items.c.name)).where(items.c.pk == "A"),
            'SELECT "name" FROM "items" WHERE "pk" = ?',
        ),
    ],
)
def test_select(statement, expected):
    assert partiql(statement) == expected


def test_parameters_follow_the_rendered_order():
    statement = select(items).where(items.c.n == 5, items.c.sk > "1", items.c.pk == "A")
    assert params(statement) == ["A", "1", 5]


def test_quoting_of_names_that_need_it():
    odd = Table(
        'we"ird-table',
        MetaData(),
        Column("$type", String, primary_key=True),
        Column('it\'s "x"', String),
        Column("order", Integer),
    )
    statement = select(odd).where(odd.c["$type"] == "A", odd.c["order"] == 1)
    assert partiql(statement) == (
        'SELECT "$type", "it\'s ""x""", "order" FROM "we""ird-table" WHERE "$type" = ? AND ("order" = ?)'
    )
    insert = odd.insert().values({"$type": "A", 'it\'s "x"': "v", "order": 1})
    assert (
        partiql(insert) == "INSERT INTO \"we\"\"ird-table\" VALUE {'$type': ?, 'it''s \"x\"': ?, 'order': ?}"
    )


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        (
            items.insert().values(pk="a", sk="b", n=1),
            "INSERT INTO \"items\" VALUE {'pk': ?, 'sk': ?, 'n': ?}",
        ),
        (
            items.update().where(items.c.pk == "a", items.c.sk == "b").values(n=3, name="x"),
            'UPDATE "items" SET "n" = ?, "name" = ? WHERE "pk" = ? AND "sk" = ?',
        ),
        (
            items.update().where(items.c.n == 2, items.c.sk == "b", items.c.pk == "a").values(n=3),
            'UPDATE "items" SET "n" = ? WHERE "pk" = ? AND "sk" = ? AND ("n" = ?)',
        ),
        (
            items.delete().where(items.c.pk == "a", items.c.sk == "b"),
            'DELETE FROM "items" WHERE "pk" = ? AND "sk" = ? RETURNING ALL OLD *',
        ),
        (
            hash_only.delete().where(hash_only.c.id == "a"),
            'DELETE FROM "hash_only" WHERE "id" = ? RETURNING ALL OLD *',
        ),
    ],
)
def test_writes(statement, expected):
    assert partiql(statement) == expected


def test_none_values_become_absent_attributes():
    """INSERT omits a None value; UPDATE REMOVEs it (the template renders both per execution)."""
    insert = items.insert().values(pk="a", sk="b", n=1, name=None).compile(dialect=dialect)
    assert (
        insert.record.template.render(frozenset({3}))
        == "INSERT INTO \"items\" VALUE {'pk': ?, 'sk': ?, 'n': ?}"
    )
    update = items.update().where(items.c.pk == "a", items.c.sk == "b").values(n=None, name=None)
    template = update.compile(dialect=dialect).record.template
    assert (
        template.render(frozenset({0}))
        == 'UPDATE "items" SET "name" = ? REMOVE "n" WHERE "pk" = ? AND "sk" = ?'
    )
    assert (
        template.render(frozenset({0, 1}))
        == 'UPDATE "items" REMOVE "n" REMOVE "name" WHERE "pk" = ? AND "sk" = ?'
    )


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        (select(items).where(items.c.n + 1 == 2), "the operator add"),
        (select(items).where(items.c.name.ilike("a%")), "the operator ilike_op"),
        (select(items).where(items.c.name.endswith("x")), "the operator endswith_op"),
        (select(items).where(items.c.n == items.c.pk), "a comparison of two attributes (n and pk)"),
        (
            select(items.c.n, items.c.name).group_by(items.c.n),
            "the column name neither grouped nor aggregated",
        ),
        (select(func.sum(items.c.n * 2)).select_from(items), "sum() of BinaryExpression"),
        (select(items).with_for_update(), "SELECT ... FOR UPDATE"),
        (select(items).where(func.count() > 1), "COUNT here"),
        (select(items).where(func.lower(items.c.name) == "x"), "the SQL function lower()"),
        (select(items).where(cast(items.c.n, String) == "1"), "CAST"),
        (select(case((items.c.n > 1, "big"), else_="small")), "CASE"),
        (select(items).join(other, other.c.items_pk == items.c.name), "a JOIN of other on items_pk"),
        (select(items).join(other, other.c.id == items.c.name, full=True), "FULL OUTER JOIN"),
        (select(items, other), "a SELECT over several tables"),
        (
            select(items).where(or_(items.c.pk.in_(select(other.c.items_pk)), items.c.n == 1)),
            "a subquery other than a top-level IN",
        ),
        (union(select(items.c.pk), select(other.c.id)), "UNION"),
        (select(items).where(items.c.pk == "A").order_by(func.lower(items.c.name)), "ORDER BY lower"),
        (select(literal_column("1")), "a SELECT without a table"),
        (items.update().where(items.c.pk == "a", items.c.sk == "b").values(sk="c"), 'key attribute "sk"'),
        (
            items.insert().values([{"pk": "a", "sk": "b"}, {"pk": "c", "sk": "d"}]),
            "a multi-row VALUES clause",
        ),
        (items.insert().from_select(["pk", "sk"], select(other.c.id, other.c.id)), "INSERT ... SELECT"),
        (items.delete().where(items.c.pk == "a", items.c.sk == "b").returning(items.c.n), "RETURNING"),
    ],
)
def test_refusals_name_the_construct(statement, message):
    with pytest.raises(CompileError, match="DynamoDB PartiQL cannot express") as raised:
        partiql(statement)
    assert message in str(raised.value)


def test_an_empty_in_list_is_the_constant_sql_says_it_is():
    """x IN () is FALSE and x NOT IN () TRUE for every row, a missing x too (the NOT IN's guard
    goes with it): DynamoDB rejects IN [], so the execution writes the constants."""
    compiled = select(items.c.pk).where(items.c.pk == "a", or_(items.c.n.in_([]), items.c.n.not_in([])))
    expanded = compiled.compile(dialect=dialect).construct_expanded_state({"n_1": [], "n_2": []})
    assert expanded.statement == (
        'SELECT "pk" FROM "items" WHERE "pk" = ? AND ("n" IN [] OR '
        '(NOT "n" IN [] AND attribute_exists("n") AND "n" <> NULL))'
    )
    assert (
        empty_lists_decided(expanded.statement)
        == 'SELECT "pk" FROM "items" WHERE "pk" = ? AND (1 = 2 OR 1 = 1)'
    )


@pytest.mark.parametrize(
    "statement",
    [
        items.update().where(items.c.pk == "a", items.c.sk == "b").values(n=items.c.n + 1),
        items.update().where(items.c.name == "x").values(n=2 * items.c.n),
    ],
)
def test_an_arithmetic_set_is_refused_with_what_to_do_instead(statement):
    """Not as a filter's operator: the advice is for the write."""
    with pytest.raises(CompileError) as raised:
        partiql(statement)
    assert str(raised.value) == (
        "SET n to an arithmetic expression is not supported yet (sa_dynamo writes values only): read n "
        "and write the result (select it, then update(...).values(n=new_value)), or change the attribute "
        "of the ORM object and commit"
    )


def test_in_list_expands_to_a_partiql_list():
    compiled = select(items).where(items.c.pk.in_(["A", "B", "C"])).compile(dialect=dialect)
    state = compiled.construct_expanded_state({"pk_1": ["A", "B", "C"]})
    assert state.statement == ALL + ' WHERE "pk" IN [?, ?, ?]'
    assert [state.parameters[name] for name in state.positiontup] == ["A", "B", "C"]


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ([], "has no primary key"),
        (["a", "b", "c"], "has 3 primary-key columns (a, b, c)"),
    ],
)
def test_bad_key_schemas(columns, message):
    table = Table(
        "bad",
        MetaData(),
        *[Column(name, String, primary_key=True) for name in columns],
        Column("v", String),
    )
    with pytest.raises(ArgumentError) as raised:
        partiql(select(table).where(table.c.v == "x"))
    assert message in str(raised.value)


def test_dynamodb_key_overrides_declaration_order():
    table = Table(
        "swapped",
        MetaData(),
        Column("sk", String, primary_key=True, dynamodb_key="range"),
        Column("pk", String, primary_key=True, dynamodb_key="hash"),
    )
    statement = select(table).where(table.c.sk == "1", table.c.pk == "A")
    assert partiql(statement) == 'SELECT "sk", "pk" FROM "swapped" WHERE "pk" = ? AND "sk" = ?'


indexed = Table(
    "indexed",
    MetaData(),
    Column("pk", String, primary_key=True),
    Column("sk", String, primary_key=True),
    Column("gsi1pk", String),
    Column("gsi1sk", String),
    Column("gsi2pk", String),
    Column("created", String),
    Column("n", Integer),
    Index("gsi1", "gsi1pk", "gsi1sk", dynamodb_projection="ALL"),
    Index("gsi2", "gsi2pk", dynamodb_projection="KEYS_ONLY"),
    Index(
        "lsi1", "pk", "created", dynamodb_local=True, dynamodb_projection="INCLUDE", dynamodb_include=["n"]
    ),
)
INDEXED = 'SELECT "pk", "sk", "gsi1pk", "gsi1sk", "gsi2pk", "created", "n" FROM "indexed'


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        (
            select(indexed).where(
                indexed.c.gsi1pk == "STATUS#PAID", indexed.c.gsi1sk > "2024", indexed.c.n == 1
            ),
            INDEXED + '"."gsi1" WHERE "gsi1pk" = ? AND "gsi1sk" > ? AND ("n" = ?)',
        ),
        (
            select(indexed)
            .where(indexed.c.gsi1pk == "S", indexed.c.gsi1sk.is_not(None))
            .order_by(indexed.c.gsi1sk),
            # every item of gsi1 has gsi1sk: the test is TRUE, DynamoDB is not asked
            INDEXED + '"."gsi1" WHERE "gsi1pk" = ? ORDER BY "gsi1sk"',
        ),
        # reading an index, its keys and the table's are in every item: no presence guards
        (
            select(indexed.c.pk).where(indexed.c.gsi1pk == "S", indexed.c.gsi1sk > "a", indexed.c.pk != "x"),
            'SELECT "pk" FROM "indexed"."gsi1" WHERE "gsi1pk" = ? AND "gsi1sk" > ? AND ("pk" <> ?)',
        ),
        # items without gsi1sk are not in gsi1, and the WHERE matches them: the table is read
        (select(indexed).where(indexed.c.gsi1pk == "S"), INDEXED + '" WHERE "gsi1pk" = ?'),
        # KEYS_ONLY projects the keys only: selecting every column cannot use it
        (select(indexed).where(indexed.c.gsi2pk == "X"), INDEXED + '" WHERE "gsi2pk" = ?'),
        (
            select(indexed.c.pk, indexed.c.sk).where(indexed.c.gsi2pk == "X"),
            'SELECT "pk", "sk" FROM "indexed"."gsi2" WHERE "gsi2pk" = ?',
        ),
        # a local index serves a sort condition the table's sort key cannot
        (
            select(indexed.c.pk, indexed.c.created, indexed.c.n).where(
                indexed.c.pk == "A", indexed.c.created > "2024"
            ),
            'SELECT "pk", "created", "n" FROM "indexed"."lsi1" WHERE "pk" = ? AND "created" > ?',
        ),
        (
            select(indexed).where(indexed.c.pk == "A", indexed.c.created > "2024"),
            INDEXED + '" WHERE "pk" = ? AND ("created" > ?)',
        ),
        (
            select(indexed).where(indexed.c.pk == "A", indexed.c.gsi1pk == "S"),
            INDEXED + '" WHERE "pk" = ? AND ("gsi1pk" = ?)',
        ),
    ],
)
def test_index_selection(statement, expected):
    assert partiql(statement) == expected


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        # the table's own key would serve it, but the option decides
        (
            select(indexed.c.pk, indexed.c.sk).where(indexed.c.pk == "A", indexed.c.gsi2pk == "X"),
            'SELECT "pk", "sk" FROM "indexed"."gsi2" WHERE "gsi2pk" = ? AND ("pk" = ?)',
        ),
        (
            select(indexed.c.pk, indexed.c.sk)
            .where(indexed.c.pk.in_(["A", "B"]), indexed.c.gsi2pk == "X")
            .options(use_index("gsi2")),
            'SELECT "pk", "sk" FROM "indexed"."gsi2" WHERE "gsi2pk" = ? AND (NOT (NOT ("pk" IN [__[POSTCOMPILE_pk_1]])))',
        ),
        # no condition on the index's partition key: a scan of the index
        (
            select(indexed.c.pk).where(indexed.c.n == 1).options(use_index("gsi1")),
            'SELECT "pk" FROM "indexed"."gsi1" WHERE "n" = ?',
        ),
        (
            select(indexed.c.pk, indexed.c.created).where(indexed.c.pk == "A").order_by(indexed.c.created),
            'SELECT "pk", "created" FROM "indexed"."lsi1" WHERE "pk" = ? ORDER BY "created"',
        ),
    ],
)
def test_use_index_forces_the_index(statement, expected):
    if not statement._with_options:
        statement = statement.options(use_index("gsi2" if "gsi2" in expected else "lsi1"))
    assert partiql(statement) == expected


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        (
            select(indexed).where(indexed.c.gsi2pk == "X").options(use_index("gsi2")),
            "index 'gsi2' does not project created, gsi1pk, gsi1sk, n, which the query reads: select only "
            "the attributes it projects, or read the table",
        ),
        (
            select(indexed.c.pk).where(indexed.c.pk == "A").options(use_index("gsi9")),
            "table 'indexed' has no index 'gsi9' (its indexes: gsi1, gsi2, lsi1); name one of them in "
            "use_index()/dynamodb_index",
        ),
        (
            select(indexed.c.pk).options(use_index("gsi1"), use_index("gsi2")),
            "a statement can read one index, not gsi1, gsi2",
        ),
    ],
)
def test_use_index_refusals(statement, message):
    with pytest.raises((CompileError, ArgumentError)) as raised:
        partiql(statement)
    assert str(raised.value) == message


def test_use_index_is_part_of_the_cache_key():
    query = select(indexed.c.pk).where(indexed.c.gsi2pk == "X")
    plain, gsi2, gsi1 = (
        query._generate_cache_key(),
        query.options(use_index("gsi2"))._generate_cache_key(),
        query.options(use_index("gsi1"))._generate_cache_key(),
    )
    assert plain != gsi2 and gsi2 != gsi1 and plain != gsi1
    again = select(indexed.c.pk).where(indexed.c.gsi2pk == "Y").options(use_index("gsi2"))
    assert again._generate_cache_key() == query.options(use_index("gsi2"))._generate_cache_key()


flags = Table(
    "flags",
    MetaData(),
    Column("pk", String, primary_key=True),
    Column("b", Boolean),
    Column("n", Integer),
    Column("s", String),
    Column("tags", StringSet),
    Column("doc", JSON),
)
FLAGS = 'SELECT "pk" FROM "flags" WHERE '


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (flags.c.b, '"b" = true'),
        (~flags.c.b, '"b" = false'),
        (and_(flags.c.b, flags.c.n > 1), 'NOT (NOT ("b" = true AND "n" > ?))'),
        (or_(flags.c.b, flags.c.n > 1), '"b" = true OR "n" > ?'),
        # NOT goes down to the tests (De Morgan); each negated test is TRUE only where SQL's is
        (
            not_(or_(flags.c.n == 1, flags.c.s == "x")),
            'NOT (NOT (("n" <> ? AND attribute_exists("n") AND "n" <> NULL) AND ("s" <> ? AND attribute_exists("s") AND "s" <> NULL)))',
        ),
        (not_(and_(flags.c.n > 1, flags.c.s < "x")), '"n" <= ? OR "s" >= ?'),
        (
            not_(and_(flags.c.n > 1, or_(flags.c.b, flags.c.s.is_(None)))),
            '"n" <= ? OR "b" = false AND (attribute_exists("s") AND "s" <> NULL)',
        ),
        (not_(not_(flags.c.n == 1)), '"n" = ?'),
        (~flags.c.n.between(1, 5), '("n" < ? OR "n" > ?)'),
        (
            ~flags.c.n.in_([1, 2]),
            '(NOT "n" IN [__[POSTCOMPILE_n_1]] AND attribute_exists("n") AND "n" <> NULL)',
        ),
        (flags.c.s.contains("ab"), 'contains("s", ?)'),
        (flags.c.tags.contains("red"), 'contains("tags", ?)'),
        (~flags.c.s.contains("ab"), '(NOT contains("s", ?) AND attribute_exists("s") AND "s" <> NULL)'),
        (func.size(flags.c.tags) > 2, 'size("tags") > ?'),
        (func.attribute_type(flags.c.doc, "M"), 'attribute_type("doc", ?)'),
        (func.attribute_exists(flags.c.s), 'attribute_exists("s")'),
        (~func.attribute_exists(flags.c.s), 'attribute_not_exists("s")'),
        (func.begins_with(flags.c.s, "a"), 'begins_with("s", ?)'),
        (flags.c.doc["a"]["b"] == 5, "\"doc\"['a']['b'] = ?"),
        (flags.c.doc[0] == "x", '"doc"[0] = ?'),
        (flags.c.doc[("a", 0, "b")] == 5, "\"doc\"['a'][0]['b'] = ?"),
        (flags.c.doc["it's"].as_string() == "x", "\"doc\"['it''s'] = ?"),
    ],
)
def test_conditions(condition, expected):
    compiled = (
        select(flags.c.pk)
        .where(condition)
        .compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
    )
    text = compiled.string
    if "[__[POSTCOMPILE" in expected:
        text = select(flags.c.pk).where(condition).compile(dialect=dialect).string
    assert text == FLAGS + expected


def test_json_path_steps_are_rendered_per_execution():
    """The path step is a literal in the text, so it must not be baked into the cached statement."""
    compiled = select(flags.c.pk).where(flags.c.doc["a"] == 1).compile(dialect=dialect)
    first = compiled.construct_expanded_state({"doc_1": "a", "param_1": 1})
    second = compiled.construct_expanded_state({"doc_1": "z", "param_1": 1})
    assert first.statement == FLAGS + "\"doc\"['a'] = ?"
    assert second.statement == FLAGS + "\"doc\"['z'] = ?"
    whole = select(flags.c.pk).where(flags.c.doc[("a", 0)] == 1).compile(dialect=dialect)
    assert whole.construct_expanded_state({"doc_1": ("b", 2), "param_1": 1}).statement == (
        FLAGS + "\"doc\"['b'][2] = ?"
    )
    with pytest.raises(CompileError, match=r"the JSON path step 1\.5: use str keys and int list positions"):
        whole.construct_expanded_state({"doc_1": ("b", 1.5), "param_1": 1})


@pytest.mark.parametrize(
    ("condition", "sent", "checked"),
    [
        # SQL's wildcards: checked at execution (a value with % or _ is refused then)
        (flags.c.s.startswith("a_b"), ["a_b"], {"s_1": "startswith"}),
        (flags.c.s.contains("a%b"), ["a%b"], {"s_1": "contains"}),
        # escaped: taken literally, sent without the escapes
        (flags.c.s.startswith("a_b%", autoescape=True), ["a_b%"], {}),
        (flags.c.s.contains("a^%b^^", escape="^"), ["a%b^"], {}),
        # an element of a set, not a pattern
        (flags.c.tags.contains("a_b"), ["a_b"], {}),
    ],
)
def test_prefix_and_substring_values_follow_like_escaping(condition, sent, checked):
    compiled = select(flags.c.pk).where(condition).compile(dialect=dialect)
    values = compiled.construct_params()
    processors = compiled._bind_processors
    assert [processors[n](values[n]) if n in processors else values[n] for n in compiled.positiontup] == sent
    assert compiled.record.like_parameters == checked


@pytest.mark.parametrize(
    ("statement", "text", "sent"),
    [
        # LIKE 'prefix%' is begins_with, a key condition on the sort key; the pattern's escapes go
        (
            select(items.c.n).where(items.c.pk == "K", items.c.sk.like("O#%")),
            'SELECT "n" FROM "items" WHERE "pk" = ? AND begins_with("sk", ?)',
            ["K", "O#"],
        ),
        (
            select(flags.c.pk).where(flags.c.s.like("a!%b%", escape="!")),
            'SELECT "pk" FROM "flags" WHERE begins_with("s", ?)',
            ["a%b"],
        ),
        (
            select(flags.c.pk).where(not_(flags.c.s.like("a%"))),
            'SELECT "pk" FROM "flags" WHERE (NOT begins_with("s", ?) AND attribute_exists("s") AND "s" <> NULL)',
            ["a"],
        ),
    ],
)
def test_like_with_a_prefix_pattern_is_begins_with(statement, text, sent):
    compiled = statement.compile(dialect=dialect)
    assert compiled.string == text
    values = compiled.construct_params()
    processors = compiled._bind_processors
    assert [processors[n](values[n]) if n in processors else values[n] for n in compiled.positiontup] == sent


@pytest.mark.parametrize("negated", [False, True])
def test_like_on_a_binary_attribute_is_refused(negated):
    """SQLAlchemy 2.0 offers LIKE on a LargeBinary (2.1 deprecates it). SQLite's LIKE never
    matches a binary value (x'6162' LIKE x'6125' is 0), DynamoDB's begins_with tests bytes: the
    pattern was sent as the prefix before, and NOT LIKE returned rows SQLite does not."""
    blobs = Table("blobs", MetaData(), Column("pk", String, primary_key=True), Column("data", LargeBinary))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SADeprecationWarning)
        condition = blobs.c.data.not_like(b"a%") if negated else blobs.c.data.like(b"a%")
    with pytest.raises(CompileError, match="LIKE on the binary attribute data: SQL's LIKE matches no byte"):
        partiql(select(blobs.c.pk).where(blobs.c.pk == "A", condition))


@pytest.mark.parametrize("pattern", ["%a", "a_b%", "a%b", "abc", "", "a%%"])
def test_like_patterns_other_than_a_prefix_have_no_prefix(pattern):
    assert like_prefix(pattern, None) is None


def test_in_lists_are_capped():
    compiled = select(flags.c.pk).where(flags.c.n.in_(list(range(101)))).compile(dialect=dialect)
    with pytest.raises(CompileError, match="IN with 101 values: DynamoDB takes at most 100"):
        compiled.construct_expanded_state({"n_1": list(range(101))})
    compiled.construct_expanded_state({"n_1": list(range(100))})


def test_partition_key_lists_are_capped_at_fifty():
    """On a table with a sort key, an IN over more than 50 partitions is refused; without a sort
    key each partition is one item, and the list is read as a batch (test_key_lists.py)."""
    compiled = select(items.c.pk).where(items.c.pk.in_([]), items.c.n.in_([])).compile(dialect=dialect)
    keys = [f"K{i}" for i in range(51)]
    with pytest.raises(CompileError, match="IN with 51 partition keys: DynamoDB reads at most 50 partitions"):
        compiled.construct_expanded_state({"pk_1": keys, "n_1": [1]})
    compiled.construct_expanded_state({"pk_1": keys[:50], "n_1": list(range(100))})
    batched = select(flags.c.pk).where(flags.c.pk.in_([]), flags.c.n.in_([])).compile(dialect=dialect)
    expanded = batched.construct_expanded_state({"pk_1": keys * 2, "n_1": [1]})
    assert expanded.positiontup[50:] == ["pk_1_51", "n_1_1"]  # each key once, the keys first


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        (func.lower(flags.c.s) == "a", "the SQL function lower()"),
        (func.size(flags.c.s, flags.c.n) == 1, "size() with 2 arguments"),
        (flags.c.s.like(func.lower("a%")), "LIKE with a pattern that is not a value"),
        # DynamoDB answers an ordering of a set with a ValidationException, after sending
        (flags.c.tags < {"x"}, "an ordering of the set attribute tags: DynamoDB orders no sets"),
        (flags.c.tags.between({"a"}, {"b"}), "an ordering of the set attribute tags"),
        # DynamoDB's begins_with answers a set with a ValidationException; contains() tests a member
        (flags.c.tags.startswith("a"), "startswith() on the set attribute tags"),
        (flags.c.tags.like("a%"), "on the set attribute tags"),
        # DynamoDB orders no documents either (a ValidationException after sending)
        (flags.c.doc > {"a": 1}, "an ordering of the JSON document attribute doc: DynamoDB orders no"),
        (~flags.c.doc.between([1], [2]), "an ordering of the JSON document attribute doc"),
        # DynamoDB's functions of a type they do not take: FALSE there (size(b) <> 1 TRUE), no
        # such test in SQL (the surface differential's new-function-on-wrong-type)
        (func.size(flags.c.b) != 1, "size() of the boolean attribute b: DynamoDB's size measures"),
        (func.size(flags.c.n) == 1, "size() of the integer attribute n"),
        (func.begins_with(flags.c.n, "1"), "begins_with() of the integer attribute n"),
        (func.begins_with(flags.c.tags, "x"), "begins_with() of the set attribute tags"),
        (func.begins_with(flags.c.doc, "x"), "begins_with() of the JSON document attribute doc"),
        (func.contains(flags.c.b, "x"), "contains() of the boolean attribute b"),
        # SQLite reads a bare string as a number; DynamoDB refuses a non-boolean condition
        (flags.c.s, "the string attribute s as a condition: only a Boolean attribute"),
        (~flags.c.n, "the integer attribute n as a condition"),
    ],
)
def test_condition_refusals(condition, message):
    with pytest.raises(CompileError, match="DynamoDB PartiQL cannot express") as raised:
        partiql(select(flags.c.pk).where(condition))
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: flags.c.doc.contains("x"), "contains() on the JSON document attribute doc"),
        (lambda: flags.c.doc.startswith("x"), "startswith() on the JSON document attribute doc"),
        (lambda: ~flags.c.doc.like("x%"), "NOT LIKE on the JSON document attribute doc"),
    ],
)
def test_string_tests_of_a_whole_document_are_refused(build, message):
    """SQLAlchemy 2.0 offers them (2.1 deprecates them): SQL tests the document's JSON text,
    DynamoDB's begins_with and contains its value, so they cannot agree."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SADeprecationWarning)
        condition = build()
    with pytest.raises(CompileError, match="DynamoDB PartiQL cannot express") as raised:
        partiql(select(flags.c.pk).where(condition))
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("query", "expected", "hidden"),
    [
        (
            select(items.c.sk).where(items.c.pk == "A").order_by(items.c.sk.desc()),
            'SELECT "sk", "pk" FROM "items" WHERE "pk" = ? ORDER BY "sk" DESC',
            1,
        ),
        (
            select(items.c.name).where(items.c.pk == "A").order_by(items.c.sk.desc()),
            'SELECT "name", "pk", "sk" FROM "items" WHERE "pk" = ? ORDER BY "sk" DESC',
            2,
        ),
        (
            select(items.c.sk, items.c.pk).where(items.c.pk == "A").order_by(items.c.sk.desc()),
            'SELECT "sk", "pk" FROM "items" WHERE "pk" = ? ORDER BY "sk" DESC',
            0,
        ),
        (
            select(indexed.c.pk)
            .where(indexed.c.gsi1pk == "P", indexed.c.gsi1sk > "2024")
            .order_by(indexed.c.gsi1sk.desc()),
            'SELECT "pk", "gsi1pk", "gsi1sk" FROM "indexed"."gsi1" WHERE "gsi1pk" = ? AND "gsi1sk" > ? '
            'ORDER BY "gsi1sk" DESC',
            2,
        ),
    ],
)
def test_descending_order_projects_the_keys_read_without_returning_them(query, expected, hidden):
    """DynamoDB Local fails ORDER BY ... DESC unless the partition key of the table or index read
    is in the projection, and returns the pages of a longer read upwards: the driver sorts them
    by the sort key."""
    compiled = query.compile(dialect=dialect)
    assert compiled.string == expected
    assert compiled.record.hidden_columns == hidden


def test_operator_limit_matches_dynamodb_count():
    """partiql-reference §12: pk = ? AND (n = ? OR ... x149) is 299 operators; x150 is 301."""
    from sa_dynamo.dialect.compiler import operator_count

    def with_ors(n: int):
        return select(items.c.pk).where(items.c.pk == "A", or_(*[items.c.n == i for i in range(n)]))

    assert operator_count(partiql(with_ors(149))) == 299
    assert operator_count('SELECT "a" FROM "t" WHERE "a" BETWEEN ? AND ? AND begins_with("b", ?)') == 3
    with pytest.raises(
        CompileError, match="a statement with 301 operators and functions: DynamoDB allows 300"
    ):
        partiql(with_ors(150))


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        # a table key attribute is always present: no guard (DynamoDB Local fails one on a key)
        (items.c.pk != "A", '"pk" <> ?'),
        (and_(items.c.sk.is_not(None), items.c.n == 1), '"n" = ?'),
        (or_(items.c.sk.is_(None), items.c.n == 1), '"n" = ?'),
        (~items.c.pk.in_(["A"]), 'NOT "pk" IN [__[POSTCOMPILE_pk_1]]'),
    ],
)
def test_key_attributes_need_no_presence_guard(condition, expected):
    assert partiql(select(items.c.pk).where(condition)) == 'SELECT "pk" FROM "items" WHERE ' + expected


def test_between_is_kept_only_as_a_sort_key_condition():
    statement = select(items.c.pk).where(
        items.c.pk == "A", items.c.sk.between("a", "b"), items.c.n.between(1, 2)
    )
    compiled = statement.compile(dialect=dialect)
    assert compiled.string == (
        'SELECT "pk" FROM "items" WHERE "pk" = ? AND "sk" BETWEEN ? AND ? AND (("n" >= ? AND "n" <= ?))'
    )
    assert compiled.record.key_between == ("sk_1", "sk_2")


def test_not_in_beside_order_by_becomes_a_chain_at_execution():
    from sa_dynamo.dialect.compiler import not_in_as_chain

    statement = select(items.c.pk).where(items.c.pk == "A", ~items.c.n.in_([1, 2])).order_by(items.c.sk)
    compiled = statement.compile(dialect=dialect)
    assert compiled.record.not_in_chain
    expanded = compiled.construct_expanded_state({"pk_1": "A", "n_1": [1, 2]}).statement
    assert not_in_as_chain(expanded) == (
        'SELECT "pk" FROM "items" WHERE "pk" = ? AND ((("n" <> ? AND "n" <> ?) AND attribute_exists("n") AND "n" <> NULL)) '
        'ORDER BY "sk"'
    )


def test_not_in_of_a_json_path_beside_order_by_becomes_a_chain_too():
    """DynamoDB Local answers NOT "doc"['a'] IN [...] beside ORDER BY with InternalFailure."""
    from sa_dynamo.dialect.compiler import not_in_as_chain

    path = items.c.doc[("a", 0, "it's")].as_integer()
    statement = select(items.c.pk).where(items.c.pk == "A", path.not_in([1, 2])).order_by(items.c.sk)
    compiled = statement.compile(dialect=dialect)
    expanded = compiled.construct_expanded_state({"pk_1": "A", "param_1": [1, 2]}).statement
    attribute = "\"doc\"['a'][0]['it''s']"
    assert not_in_as_chain(expanded) == (
        f'SELECT "pk" FROM "items" WHERE "pk" = ? AND ((({attribute} <> ? AND {attribute} <> ?) '
        f'AND attribute_exists({attribute}) AND {attribute} <> NULL)) ORDER BY "sk"'
    )


@pytest.mark.parametrize(
    "condition",
    [~items.c.name.startswith("a"), ~items.c.name.contains("a")],
)
def test_negations_beside_order_by_are_refused(condition):
    """DynamoDB Local fails NOT (...) in a statement with ORDER BY."""
    statement = select(items.c.pk).where(items.c.pk == "A", condition).order_by(items.c.sk)
    with pytest.raises(CompileError, match="together with ORDER BY"):
        partiql(statement)


def test_a_key_compared_with_null_folds_to_a_constant():
    """DynamoDB refuses NULL comparisons on keys; a key is never NULL, so SQL's answer is known."""
    always = select(items.c.pk).where(items.c.pk.is_not(None)).compile(dialect=dialect)
    assert always.string == 'SELECT "pk" FROM "items"'
    never = select(items.c.pk).where(items.c.pk == "A", items.c.sk.is_(None)).compile(dialect=dialect)
    assert never.record.always_empty


def test_null_tests_of_the_keys_of_an_index_read_fold_to_constants():
    """Every item of an index has its keys: IS NULL of one matches nothing, IS NOT NULL drops out
    (DynamoDB refuses both tests, and attribute_type() on a number key)."""
    chosen = select(indexed.c.pk).where(indexed.c.gsi1pk == "S").options(use_index("gsi1"))
    never = chosen.where(or_(indexed.c.gsi1sk.is_(None), indexed.c.gsi1pk.is_(None))).compile(dialect=dialect)
    assert never.string == 'SELECT "pk" FROM "indexed"."gsi1" WHERE "gsi1pk" = ?'
    assert never.record.always_empty
    either = chosen.where(or_(indexed.c.gsi1sk.is_(None), indexed.c.n == 1))
    assert partiql(either) == 'SELECT "pk" FROM "indexed"."gsi1" WHERE "gsi1pk" = ? AND ("n" = ?)'
    table_read = select(indexed.c.pk).where(indexed.c.pk == "A", indexed.c.gsi1sk.is_not(None))
    assert partiql(table_read) == (
        'SELECT "pk" FROM "indexed" WHERE "pk" = ? AND ((attribute_exists("gsi1sk") AND "gsi1sk" <> NULL))'
    )


def test_presence_tests_of_the_keys_of_an_index_read_fold_to_constants():
    """Reading an index, attribute_exists() of one of its keys is TRUE for every item read
    (DynamoDB Local fails it with InternalFailure); attribute_type() of one is refused
    (DynamoDB answers "Condition parameter type does not match schema type")."""
    chosen = select(indexed.c.pk).where(indexed.c.gsi1pk == "S").options(use_index("gsi1"))
    index_read = chosen.where(
        func.attribute_exists(indexed.c.gsi1sk), ~func.attribute_not_exists(indexed.c.n)
    )
    assert partiql(index_read) == (
        'SELECT "pk" FROM "indexed"."gsi1" WHERE "gsi1pk" = ? AND (attribute_exists("n"))'
    )
    never = chosen.where(func.attribute_not_exists(indexed.c.gsi1pk)).compile(dialect=dialect)
    assert never.string == 'SELECT "pk" FROM "indexed"."gsi1" WHERE "gsi1pk" = ?'
    assert never.record.always_empty
    either = chosen.where(or_(func.attribute_not_exists(indexed.c.gsi1sk), indexed.c.n == 1))
    assert partiql(either) == 'SELECT "pk" FROM "indexed"."gsi1" WHERE "gsi1pk" = ? AND ("n" = ?)'
    # on the table they stay: attribute_exists() of the key makes a write conditional
    conditional = items.delete().where(
        items.c.pk == "A", items.c.sk == "b", func.attribute_exists(items.c.pk)
    )
    assert partiql(conditional) == (
        'DELETE FROM "items" WHERE "pk" = ? AND "sk" = ? AND (attribute_exists("pk")) RETURNING ALL OLD *'
    )
    with pytest.raises(
        CompileError, match="attribute_type\\(\\) of gsi1sk, a key attribute of the index read"
    ):
        partiql(chosen.where(func.attribute_type(indexed.c.gsi1sk, "S")))


def test_a_full_key_list_compiles_to_a_single_item_select_per_key():
    """The compiled text shows the tuple IN; what is sent is one single-item SELECT per key,
    with the name the client filters on (and orders by) read beside the selected columns."""
    statement = (
        select(items.c.sk, items.c.n)
        .where(tuple_(items.c.pk, items.c.sk).in_([("a", "b")]), items.c.name == "x")
        .order_by(items.c.name.desc())
    )
    compiled = statement.compile(dialect=dialect)
    assert compiled.string == (
        'SELECT "sk", "n", "name" FROM "items" WHERE ("pk", "sk") IN [__[POSTCOMPILE_param_1]] AND ("name" = ?)'
    )
    batch = compiled.record.batch_get
    assert (batch.statement, batch.width, batch.always) == (
        'SELECT "sk", "n", "name" FROM "items" WHERE "pk" = ? AND "sk" = ?',
        2,
        True,
    )
    assert compiled.record.client_order.order == ((2, True, None),)
    assert compiled.record.plan.operation == "BatchGetItem"


def test_an_order_dynamodb_cannot_serve_is_left_to_the_client():
    compiled = select(items.c.sk).where(items.c.pk == "A").order_by(items.c.n.desc(), items.c.sk)
    compiled = compiled.compile(dialect=dialect)
    assert compiled.string == 'SELECT "sk", "n" FROM "items" WHERE "pk" = ?'  # no ORDER BY sent
    assert compiled.record.hidden_columns == 1  # n is read to sort by, not returned
    assert compiled.record.client_order.order == ((1, True, None), (0, False, None))
    assert "dynamodb_client_sort=<max rows>" in compiled.record.client_order.opt_in
    bounded = select(hash_only.c.id).where(hash_only.c.id.in_(["a", "b"])).order_by(hash_only.c.v)
    assert bounded.compile(dialect=dialect).record.client_order.opt_in == ""


def test_an_order_over_a_scan_is_the_clients_with_a_cap():
    """ORDER BY over a scan is sorted on the client too, once dynamodb_client_sort caps the rows
    held: until then the refusal names the option and the reads that need none."""
    compiled = select(items).order_by(items.c.sk).compile(dialect=dialect)
    assert compiled.string == 'SELECT "pk", "sk", "n", "name", "doc" FROM "items"'
    assert compiled.record.plan.operation == "Scan"
    assert compiled.record.client_order.order == ((1, False, None),)
    assert compiled.record.client_order.opt_in == (
        "DynamoDB PartiQL cannot express ORDER BY on a scan: DynamoDB sorts only within a partition; "
        "pass the execution option dynamodb_client_sort=<max rows> to sort up to that many rows on the "
        "client (the scan itself follows dynamodb_scan), or select full keys with tuple_(pk, sk).in_(keys) "
        "(sorted on the client), or pin the partition key with == or in_()"
    )
    hash_scan = select(hash_only).order_by(hash_only.c.v).compile(dialect=dialect)
    assert hash_scan.record.client_order.opt_in.endswith(
        "or select keys with id.in_(keys) (sorted on the client)"
    )


def test_offset_is_counted_by_the_driver():
    """PartiQL has no OFFSET: the statement is sent without it and the driver skips the rows;
    whether they need a cap depends on whether the keys bound the read."""
    compiled = select(items).where(items.c.pk == "A").limit(3).offset(5).compile(dialect=dialect)
    assert compiled.string == 'SELECT "pk", "sk", "n", "name", "doc" FROM "items" WHERE "pk" = ?'
    assert compiled.construct_params()[compiled.record.offset_bind] == 5
    assert compiled.construct_params()[compiled.record.limit_bind] == 3
    assert compiled.record.bounded is False
    keys = select(items).where(tuple_(items.c.pk, items.c.sk).in_([("a", "b")])).offset(1)
    assert keys.compile(dialect=dialect).record.bounded is True
    whole = select(items).where(items.c.pk == "a", items.c.sk == "b").offset(1)
    assert whole.compile(dialect=dialect).record.bounded is True
    with pytest.raises(CompileError, match=r"OFFSET with an expression: pass an integer to \.offset\(\)"):
        select(items).offset(items.c.n).compile(dialect=dialect)


def test_a_key_list_reads_whole_attributes():
    keys = tuple_(items.c.pk, items.c.sk).in_([("a", "b")])
    with pytest.raises(CompileError, match="COUNT, a JSON path or this filter beside tuple_"):
        partiql(select(items.c.doc["a"]).where(keys))
    with pytest.raises(CompileError, match="a tuple comparison"):
        partiql(select(items).where(tuple_(items.c.pk, items.c.n).in_([("a", 1)])))
