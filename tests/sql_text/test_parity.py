"""One translator: for generated statements, the SQL-text form and the Core form give the same
PartiQL, the same plan and the same refusal (explain(): nothing is sent).

Each statement is generated twice in step: as Core over the module's tables and as the SQL text a
user would write for it, with ``:name`` parameters or literals.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from sqlalchemy import and_, delete, func, insert, literal, literal_column, not_, or_, select, text, update
from sqlalchemy.exc import CompileError, StatementError

import sa_dynamo

SEED = 20261124
STATEMENTS = 1200

STRINGS = ["a", "b", "O#1", "O#2"]
OPERATORS = {
    "=": lambda c, v: c == v,
    "<>": lambda c, v: c != v,
    "<": lambda c, v: c < v,
    "<=": lambda c, v: c <= v,
    ">": lambda c, v: c > v,
    ">=": lambda c, v: c >= v,
}


class Generator:
    """Random statements as (Core, SQL text, parameters), the text written as a user would."""

    def __init__(self, seed: int, items, users):
        self.random = random.Random(seed)
        self.items, self.users = items, users
        self.parameters: dict[str, Any] = {}

    def value(self, column: str) -> Any:
        return self.random.randint(-3, 9) if column in ("n", "doc") else self.random.choice(STRINGS)

    def written(self, value: Any) -> str:
        """The value in the text: a :parameter, or (sometimes) a literal."""
        if self.random.random() < 0.25:
            return f"'{value}'" if isinstance(value, str) else str(value)
        name = f"p{len(self.parameters)}"
        self.parameters[name] = value
        return f":{name}"

    # -- conditions --------------------------------------------------------------------------

    def test(self, table) -> tuple[Any, str]:
        c = table.c
        names = [n for n in ("pk", "sk", "n", "s", "gsi1pk", "gsi1sk") if n in c]
        kind = self.random.choice(
            ["cmp"] * 6
            + ["mirror", "in", "not in", "between", "not between", "null", "not null"]
            + [
                "like",
                "not like",
                "begins",
                "contains",
                "bool",
                "not bool",
                "exists",
                "size",
                "json",
                "refused",
            ]
        )
        name = self.random.choice(names)
        column = c[name]
        if kind == "cmp":
            op = self.random.choice(list(OPERATORS))
            value = self.value(name)
            return OPERATORS[op](column, value), f"{name} {op} {self.written(value)}"
        if kind == "mirror":
            value = self.value(name)
            return literal(value) < column, f"{self.written(value)} < {name}"
        if kind in ("in", "not in"):
            values = [self.value(name) for _ in range(self.random.randint(1, 3))]
            core = column.in_(values)
            sql = f"{name} IN ({', '.join(self.written(v) for v in values)})"
            return (not_(core), f"NOT {sql}") if kind == "not in" else (core, sql)
        if kind in ("between", "not between"):
            low, high = sorted([self.value(name), self.value(name)], key=str)
            core = column.between(low, high)
            sql = f"{name} BETWEEN {self.written(low)} AND {self.written(high)}"
            return (
                (not_(core), f"{name} NOT BETWEEN {sql.partition(' BETWEEN ')[2]}")
                if kind == "not between"
                else (core, sql)
            )
        if kind in ("null", "not null"):
            attribute = self.random.choice(["s", "n", "pk"] if "s" in c else ["n", "id"])
            if kind == "null":
                return c[attribute].is_(None), f"{attribute} IS NULL"
            return c[attribute].is_not(None), f"{attribute} IS NOT NULL"
        if "s" not in c:  # the users table has fewer attributes
            return c.n > 1, f"n > {self.written(1)}"
        if kind in ("like", "not like"):
            prefix = self.random.choice(["O#", "a", ""])
            core = c.sk.like(prefix + "%")
            return (
                (not_(core), f"sk NOT LIKE '{prefix}%'")
                if kind == "not like"
                else (core, f"sk LIKE '{prefix}%'")
            )
        if kind == "begins":
            attribute = self.random.choice(["sk", "s"])
            value = self.random.choice(["O#", "a"])
            return c[attribute].startswith(value), f"begins_with({attribute}, {self.written(value)})"
        if kind == "contains":
            return c.s.contains("x"), f"contains(s, {self.written('x')})"
        if kind == "bool":
            return c.b, "b"
        if kind == "not bool":
            return not_(c.b), "NOT b"
        if kind == "exists":
            return func.attribute_exists(c.s), "attribute_exists(s)"
        if kind == "size":
            return func.size(c.s) > 2, f"size(s) > {self.written(2)}"
        if kind == "json":
            value = self.value("doc")
            return c.doc["a"] == value, f"doc['a'] = {self.written(value)}"
        pick = self.random.randrange(3)
        if pick == 0:
            return func.lower(c.s) == "a", f"lower(s) = {self.written('a')}"
        if pick == 1:
            return c.n + 1 == 2, f"n + 1 = {self.written(2)}"
        return c.s == c.sk, "s = sk"

    def condition(self, table, depth: int = 0) -> tuple[Any, str]:
        roll = self.random.random()
        if depth >= 2 or roll < 0.45:
            return self.test(table)
        if roll < 0.55:
            core, sql = self.condition(table, depth + 1)
            return not_(core), f"NOT ({sql})"
        parts = [self.condition(table, depth + 1) for _ in range(self.random.randint(2, 3))]
        combine, word = (and_, " AND ") if roll < 0.85 else (or_, " OR ")
        return combine(*(p[0] for p in parts)), "(" + word.join(p[1] for p in parts) + ")"

    def where(self, table, full_key: bool) -> tuple[list[Any], list[str]]:
        """Conditions ANDed at the top, usually with a partition-key (or full-key) condition."""
        core, sql = [], []
        keys = ["pk", "sk"] if "sk" in table.c else ["id"]
        if full_key or self.random.random() < 0.7:
            for key in keys if full_key or self.random.random() < 0.3 else keys[:1]:
                value = self.value(key)
                core.append(table.c[key] == value)
                sql.append(f"{key} = {self.written(value)}")
        for _ in range(self.random.randint(0, 2)):
            c, s = self.condition(table)
            core.append(c)
            sql.append(s)
        order = list(range(len(core)))
        self.random.shuffle(order)  # key conditions anywhere, as users write them
        return [core[i] for i in order], [sql[i] for i in order]

    # -- statements --------------------------------------------------------------------------

    def statement(self) -> tuple[Any, str, dict[str, Any]]:
        self.parameters = {}
        table = self.items if self.random.random() < 0.85 else self.users
        kind = self.random.choice(["select"] * 7 + ["update", "delete", "insert"])
        if kind == "insert":
            names = [col.name for col in table.c if col.name in ("pk", "sk", "id", "n", "s")]
            values = {n: self.value(n) for n in names}
            if "s" in values and self.random.random() < 0.3:
                values["s"] = None
            written = ", ".join("NULL" if v is None else self.written(v) for v in values.values())
            sql = f"INSERT INTO {table.name} ({', '.join(names)}) VALUES ({written})"
            return insert(table).values(values), sql, self.parameters
        where_core, where_sql = self.where(table, full_key=kind != "select" and self.random.random() < 0.9)
        where = (" WHERE " + " AND ".join(where_sql)) if where_sql else ""
        if kind == "update":
            value = self.value("n")
            sql = f"UPDATE {table.name} SET n = {self.written(value)}{', s = NULL' if 's' in table.c else ''}{where}"
            values = {"n": value, **({"s": None} if "s" in table.c else {})}
            return update(table).where(*where_core).values(values), sql, self.parameters
        if kind == "delete":
            return delete(table).where(*where_core), f"DELETE FROM {table.name}{where}", self.parameters
        return self.select(table, where_core, where)

    def select(self, table, where_core: list[Any], where: str) -> tuple[Any, str, dict[str, Any]]:
        shape = self.random.random()
        if shape < 0.2:
            core, columns = select(literal_column("*")).select_from(table), "*"
        elif shape < 0.3:
            core, columns = select(func.count()).select_from(table), "count(*)"
        else:
            every = [col.name for col in table.c]
            names = self.random.sample(every, self.random.randint(1, min(3, len(every))))
            core, columns = select(*(table.c[n] for n in names)), ", ".join(names)
        source = table.name
        if "gsi1" in {i.name for i in table.indexes} and self.random.random() < 0.15:
            core, source = core.options(sa_dynamo.use_index("gsi1")), f"{table.name}.gsi1"
        core = core.where(*where_core)
        sql = f"SELECT {columns} FROM {source}{where}"
        if self.random.random() < 0.25 and columns != "count(*)":
            sort = self.random.choice(["sk", "sk", "n"]) if "sk" in table.c else "id"
            descending = self.random.random() < 0.4
            core = core.order_by(table.c[sort].desc() if descending else table.c[sort])
            sql += f" ORDER BY {sort}{' DESC' if descending else ''}"
        if self.random.random() < 0.2:
            core = core.limit(5)
            sql += " LIMIT 5"
        return core, sql, self.parameters


def _outcome(engine, statement) -> tuple:
    """The plan explain() gives, or the refusal's message."""
    try:
        plan = sa_dynamo.explain(engine, statement)
    except CompileError as error:
        return ("refused", str(error))
    except StatementError as error:  # a refusal while the parameters are processed
        if not isinstance(error.orig, CompileError):
            raise
        return ("refused", str(error.orig))
    return (plan.operation, plan.index, plan.key_condition, plan.filter, plan.partiql, plan.reason)


def test_sql_text_and_core_give_the_same_partiql_plan_and_refusal(engine, tables):
    generator = Generator(SEED, tables.items, tables.users)
    outcomes: Counter[str] = Counter()
    for _ in range(STATEMENTS):
        core, sql, parameters = generator.statement()
        expected = _outcome(engine, core)
        actual = _outcome(engine, text(sql).bindparams(**parameters))
        assert actual == expected, f"{sql} {parameters}"
        outcomes[expected[0] if expected[0] == "refused" else "planned"] += 1
    # both kinds are exercised in earnest
    assert outcomes["planned"] >= STATEMENTS // 2 and outcomes["refused"] >= 50, outcomes


@pytest.mark.parametrize("terms", [299, 350])
def test_the_operator_limit_holds_for_text_as_for_core(engine, tables, terms):
    """A 299-term OR has 597 operators, over DynamoDB's 300; 350 terms must not recurse away."""
    items = tables.items
    core = select(items.c.pk).where(items.c.pk == "a", or_(*(items.c.n == i for i in range(terms))))
    sql = (
        f"SELECT pk FROM {items.name} WHERE pk = 'a' AND ("
        + " OR ".join(f"n = {i}" for i in range(terms))
        + ")"
    )
    expected = _outcome(engine, core)
    assert expected[0] == "refused" and "operators and functions: DynamoDB allows 300" in expected[1]
    assert _outcome(engine, text(sql)) == expected
