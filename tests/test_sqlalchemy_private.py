"""Each private SQLAlchemy (and Alembic) name sa_dynamo uses, exercised: a release that renames or
reshapes one fails here, not in a user's query."""

from __future__ import annotations

import asyncio
import inspect

import pytest
from sqlalchemy import (
    Column,
    Integer,
    MetaData,
    String,
    Table,
    bindparam,
    delete,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.exc import CompileError
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, selectinload
from sqlalchemy.types import Boolean

from sa_dynamo import sqlalchemy_private as private
from sa_dynamo.dialect.base import DynamoDBDialect

table = Table("t", MetaData(), Column("pk", String, primary_key=True), Column("n", Integer))
dialect = DynamoDBDialect()


def test_no_hook_is_missing_or_reshaped():
    assert private.check() == []


def test_where_order_and_limit_as_written():
    statement = select(table).where(table.c.pk == "a", table.c.n > 1).order_by(table.c.n).limit(3)
    assert [str(c) for c in private.where_criteria(statement)] == ["t.pk = :pk_1", "t.n > :n_1"]
    assert [str(c) for c in private.order_by_clauses(statement)] == ["t.n"]
    assert private.limit_clause(statement).value == 3
    assert private.where_criteria(delete(table).where(table.c.pk == "a"))[0].right.value == "a"


@pytest.mark.parametrize(
    ("statement", "present"),
    [
        (select(table).distinct(), "DISTINCT"),
        (select(table).group_by(table.c.n), "GROUP BY"),
        (select(table).group_by(table.c.n).having(table.c.n > 1), "HAVING"),
        (select(table).offset(2), "OFFSET"),
        (select(table).fetch(2), "FETCH FIRST"),
        (select(table).with_for_update(), "SELECT ... FOR UPDATE"),
        (select(table).prefix_with("X"), "prefixes, suffixes or hints"),
    ],
)
def test_select_extras_name_each_clause(statement, present):
    extras = private.select_extras(statement)
    assert [name for name, on in extras.items() if on][-1] == present
    assert not any(private.select_extras(select(table)).values())


def test_group_by_having_distinct_and_label_references_as_written():
    counted = func.count().label("c")
    statement = (
        select(table.c.n, counted)
        .group_by(table.c.n)
        .having(func.count() > 1)
        .order_by("c", counted)
        .distinct()
    )
    assert [str(c) for c in private.group_by_clauses(statement)] == ["t.n"]
    assert [str(c) for c in private.having_criteria(statement)] == ["count(*) > :count_1"]
    assert private.is_distinct(statement) and not private.is_distinct(select(table))
    assert private.distinct_on(statement) == ()
    by_name, by_label = private.order_by_clauses(statement)
    assert private.label_reference(by_name) == "c"
    assert private.label_reference(by_label) is counted
    assert private.label_reference(table.c.n) is table.c.n


def test_dml_extras_and_compile_state():
    compiler = dialect.statement_compiler(dialect, None)
    statement = insert(table).values(pk="a").returning(table.c.pk)
    state = private.dml_compile_state(statement, compiler)
    assert private.dml_extras(statement, state) == (True, False)
    plain = insert(table).values(pk="a")
    assert private.dml_extras(plain, private.dml_compile_state(plain, compiler)) == (False, False)


def test_dml_values_as_given():
    """Keyed as given: a column's name (a string), or the Column (``values({column: ...})``, ORM)."""
    by_name = private.dml_values(insert(table).values(pk="a", n=bindparam("b_n")))
    assert [(key, bind.value, bind.key) for key, bind in by_name.items()][1:] == [("n", None, "b_n")]
    assert by_name["pk"].value == "a"
    by_column = private.dml_values(insert(table).values({table.c.pk: "a"}))
    assert [(key is table.c.pk, bind.value) for key, bind in by_column.items()] == [(True, "a")]
    assert private.dml_values(insert(table)) == {}


def test_dml_mapper_of_a_class_and_of_a_table_and_plain_columns():
    class Base(DeclarativeBase):
        pass

    class Thing(Base):
        __tablename__ = "things"
        pk: Mapped[str] = mapped_column(primary_key=True)

    try:
        assert private.dml_mapper(update(Thing)) is Thing.__mapper__
        assert private.dml_mapper(insert(Thing)) is Thing.__mapper__
        assert private.dml_mapper(update(Thing.__table__).where(Thing.pk == "a")) is None
        # plain(): the ORM's annotations off, the table's own column
        assert Thing.pk.expression is not Thing.__table__.c.pk
        assert private.plain(Thing.pk.expression) is Thing.__table__.c.pk
        assert private.plain("not an element") == "not an element"
    finally:
        Base.registry.dispose()


def test_crud_params_and_placeholders_tell_values_from_expressions():
    """A write's plain values are its placeholders; an SQL expression is refused by name."""
    assert str(insert(table).values(pk="a", n=1).compile(dialect=dialect)) == (
        "INSERT INTO \"t\" VALUE {'pk': ?, 'n': ?}"
    )
    with pytest.raises(CompileError, match="an SQL expression as the value of n"):
        insert(table).values(pk="a", n=func.size(table.c.pk)).compile(dialect=dialect)


def test_retyped_keeps_the_parameter():
    bind = bindparam("x", "v")
    other = private.retyped(bind, Boolean())
    assert (other.key, other.value, type(other.type)) == ("x", "v", Boolean)


def test_labels_options_text_binds_and_expanded_parameters(engine):
    label = table.c.n.label("m")
    assert private.alternate_names(label) == ()
    assert str(select(label).compile(dialect=dialect)) == 'SELECT "n" FROM "t"'
    statement = select(table).options(selectinload("*"))
    assert len(private.statement_options(statement)) == 1
    moved = private.with_load_options_of(statement, select(table))
    assert private.statement_options(moved) == private.statement_options(statement)
    declared = text("SELECT 1 WHERE a IN :ids").bindparams(bindparam("ids", expanding=True))
    assert private.text_bindparams(declared)["ids"].expanding
    with engine.connect() as conn:
        result = conn.execute(
            select(table.c.pk).where(table.c.pk.in_(["a", "b"])).execution_options(_sa_dynamo_explain={})
        )
        assert private.expanded_parameters(result.context) == {"pk_1": ["pk_1_1", "pk_1_2"]}


def test_the_alembic_names_reused_are_there():
    from alembic.autogenerate import render
    from alembic.operations import ops

    for name in (
        "_render_column",
        "_render_constraint",
        "_render_dialect_kwargs_items",
        "_repr_type",
        "_alembic_autogenerate_prefix",
        "_sqlalchemy_autogenerate_prefix",
    ):
        assert callable(getattr(render, name)), name
    for op in (ops.CreateTableOp, ops.DropTableOp):
        assert "_namespace_metadata" in inspect.signature(op.from_table).parameters
    dropped = ops.DropTableOp.from_table(table)
    assert isinstance(dropped._reverse, ops.CreateTableOp)


def test_the_greenlet_bridge_awaits_from_synchronous_code():
    async def answer() -> int:
        return 42

    def synchronous() -> tuple[bool, int]:
        return private.in_greenlet(), private.await_(answer())

    assert private.in_greenlet() is False
    assert asyncio.run(private.greenlet_spawn(synchronous)) == (True, 42)


def test_pool_capacity_is_pool_size_plus_max_overflow():
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    url = "dynamodb://127.0.0.1:1"
    assert private.pool_capacity(create_engine(url, pool_size=7, max_overflow=3).pool) == 10
    assert private.pool_capacity(create_engine(url, pool_size=7, max_overflow=-1).pool) is None
    assert private.pool_capacity(create_engine(url, poolclass=NullPool).pool) is None


def test_underlying_result_reaches_the_cursor_result_of_every_view():
    from sqlalchemy import create_engine
    from sqlalchemy.engine import CursorResult
    from sqlalchemy.orm import Session

    class Base(DeclarativeBase):
        pass

    class Thing(Base):
        __tablename__ = "thing"
        pk: Mapped[str] = mapped_column(primary_key=True)

    sqlite = create_engine("sqlite://")
    Base.metadata.create_all(sqlite)
    with Session(sqlite) as session:
        orm = session.execute(select(Thing))
        for view in (orm, orm.scalars(), session.execute(select(Thing.pk)).mappings()):
            assert isinstance(private.underlying_result(view), CursorResult)


def test_declarative_registry_of_a_declarative_base_and_of_anything_else():
    class Base(DeclarativeBase):
        pass

    assert private.declarative_registry(Base) is Base.registry
    assert private.declarative_registry(Base.metadata) is None


def test_selected_mappers_are_all_mappers_read_from_annotations() -> None:
    """``selected_mappers`` gives what ``ORMExecuteState.all_mappers`` gives for every select()
    whose elements all carry a mapper, and None (ask all_mappers) for the others."""
    from sqlalchemy import create_engine, event, literal_column
    from sqlalchemy.orm import Bundle, Session, aliased, with_polymorphic

    class Base(DeclarativeBase):
        pass

    class Animal(Base):
        __tablename__ = "animals"
        id: Mapped[int] = mapped_column(primary_key=True)
        kind: Mapped[str] = mapped_column(String)
        name: Mapped[str] = mapped_column(String, default="")
        __mapper_args__ = {"polymorphic_on": "kind", "polymorphic_identity": "animal"}

    class Dog(Animal):
        __mapper_args__ = {"polymorphic_identity": "dog"}

    class Owner(Base):
        __tablename__ = "owners"
        id: Mapped[int] = mapped_column(primary_key=True)
        name: Mapped[str] = mapped_column(String, default="")

    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    seen: list[tuple[object, object]] = []

    def compare(state) -> None:
        seen.append((private.selected_mappers(state.statement), list(state.all_mappers)))

    statements = {
        "entity": (select(Animal), [Animal]),
        "subclass": (select(Dog), [Dog]),
        "attributes": (select(Dog.name, Animal.id), [Dog, Animal]),
        "two entities": (select(Owner, Animal).join(Animal, Owner.id == Animal.id), [Owner, Animal]),
        "one repeated": (select(Animal.id, Animal.name, Animal), [Animal]),
        "alias": (select(aliased(Dog)), [Dog]),
        "with_polymorphic": (select(with_polymorphic(Animal, [Dog])), [Animal]),
        "count": (select(func.count()).select_from(Animal), None),
        "function of a column": (select(func.max(Animal.id)), None),
        "text column beside an entity": (select(Animal, literal_column("1")), None),
        "bundle": (select(Bundle("b", Animal.id, Animal.name)), None),
    }
    with Session(engine) as session:
        event.listen(session, "do_orm_execute", compare)
        for statement, _ in statements.values():
            session.execute(statement).all()
    for (name, (_, mappers)), (selected, all_mappers) in zip(statements.items(), seen, strict=True):
        expected = None if mappers is None else [m.__mapper__ for m in mappers]
        assert selected == expected, name
        if selected is not None:
            assert selected == all_mappers, name


def test_all_registries_holds_a_registry_until_it_is_disposed():
    class Base(DeclarativeBase):
        pass

    assert Base.registry in private.all_registries()
    Base.registry.dispose()
