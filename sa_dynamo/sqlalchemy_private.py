"""Every use of SQLAlchemy's private API, in one place.

Each function reads or sets one private name for which SQLAlchemy has no public counterpart;
``HOOKS`` lists the private methods the dialect overrides, with the parameters it expects. A
SQLAlchemy release that renames or reshapes any of them fails ``check()`` and its tests
(tests/test_sqlalchemy_private.py) before it breaks a query. docs/private-api.md says why each
one is needed.
"""

from __future__ import annotations

import inspect
from typing import Any

from sqlalchemy import Select, util
from sqlalchemy.engine.default import DefaultExecutionContext
from sqlalchemy.orm import mapperlib
from sqlalchemy.sql import compiler, crud, elements
from sqlalchemy.util import concurrency

# -- statements: the clauses a statement holds ---------------------------------------------------


def where_criteria(statement: Any) -> tuple[Any, ...]:
    """The WHERE terms as given to ``.where()`` (``whereclause`` ANDs them into one element)."""
    return tuple(statement._where_criteria)


def order_by_clauses(select: Any) -> tuple[Any, ...]:
    return tuple(select._order_by_clauses)


def limit_clause(select: Any) -> Any:
    return select._limit_clause


def offset_clause(select: Any) -> Any:
    return select._offset_clause


def select_extras(select: Any) -> dict[str, bool]:
    """Which clauses PartiQL lacks a SELECT carries, by their SQL names."""
    return {
        "DISTINCT": bool(select._distinct or select._distinct_on),
        "GROUP BY": bool(select._group_by_clauses),
        "HAVING": bool(select._having_criteria),
        "OFFSET": select._offset_clause is not None,
        "FETCH FIRST": select._fetch_clause is not None,
        "SELECT ... FOR UPDATE": select._for_update_arg is not None,
        "prefixes, suffixes or hints": bool(select._prefixes or select._suffixes or select._hints),
    }


def dml_extras(statement: Any, compile_state: Any) -> tuple[bool, bool]:
    """Whether an INSERT/UPDATE/DELETE has RETURNING, prefixes or hints, and whether it names
    tables other than its own."""
    extras = bool(statement._returning or statement._prefixes or statement._hints)
    return extras, bool(getattr(compile_state, "_extra_froms", None))


def dml_values(statement: Any) -> dict[Any, Any]:
    """What ``.values()`` gave an INSERT/UPDATE: column (or its key) -> value or expression."""
    return dict(statement._values or {})


def dml_mapper(statement: Any) -> Any:
    """The mapper of the class an INSERT/UPDATE/DELETE was written against (``update(Order)``),
    None for a Table's. ``entity_description`` fails on a Table's statement whose WHERE names
    mapped attributes (``update(Order.__table__).where(Order.id == 1)``)."""
    return statement.table._annotations.get("parententity")


def core_only(statement: Any) -> Any:
    """``statement`` compiled as Core, without the ORM's compile plugin that the annotations
    of its clauses (taken from an ORM statement) would carry into it."""
    statement._propagate_attrs = util.immutabledict()
    return statement


def plain(element: Any) -> Any:
    """The element without the ORM's annotations: a FROM of a join and the columns of the
    statement name one table as different objects until their annotations are taken off."""
    return element._deannotate() if hasattr(element, "_deannotate") else element


def group_by_clauses(select: Any) -> tuple[Any, ...]:
    return tuple(select._group_by_clauses)


def having_criteria(select: Any) -> tuple[Any, ...]:
    return tuple(select._having_criteria)


def is_distinct(select: Any) -> bool:
    """SELECT DISTINCT (DISTINCT ON, PostgreSQL's, is refused where it is read)."""
    return bool(select._distinct)


def distinct_on(select: Any) -> tuple[Any, ...]:
    return tuple(select._distinct_on)


def label_reference(element: Any) -> Any:
    """What an ORDER BY or GROUP BY entry that names the select list refers to: the label's
    name as a str (``order_by("n")``), the labelled expression (``order_by(x.label("n"))``),
    or the entry itself when it names nothing."""
    if isinstance(element, elements._textual_label_reference):
        return element.element
    if isinstance(element, elements._label_reference):
        return element.element
    return element


def selected_elements(compile_state: Any) -> list[Any]:
    """The elements of a SELECT's column list, in the order its columns are rendered and its
    result rows are read."""
    return [column for _, _, _, column, _ in compile_state.columns_plus_names]


def selected_mappers(statement: Any) -> list[Any] | None:
    """The mappers of a select()'s entities and attributes, in ``ORMExecuteState.all_mappers``'s
    order, read from the annotations the ORM gives them: ``all_mappers`` builds every entity's
    column descriptions to find them, a quarter of an ORM point read's listener CPU. None for
    another statement, or when a selected element carries no mapper (a function, a Core
    column): ask ``all_mappers``."""
    if not isinstance(statement, Select):
        return None
    mappers: list[Any] = []
    for column in statement._raw_columns:
        mapper = column._annotations.get("parentmapper")
        if mapper is None:
            return None
        if mapper not in mappers:
            mappers.append(mapper)
    return mappers


def statement_options(statement: Any) -> tuple[Any, ...]:
    """The options given to ``.options()`` (use_index() among them)."""
    return tuple(getattr(statement, "_with_options", ()))


def with_load_options_of(source: Any, target: Any) -> Any:
    """``target`` with the options and load path of ``source``, as the ORM's own relationship
    loaders pass them to the statement they emit."""
    target = target.options(*source._with_options)
    target._compile_options = source._compile_options
    return target


def declarative_registry(base: Any) -> Any:
    """The registry of a declarative class that keeps it only as ``_sa_registry`` (SQLModel's
    base, whose metaclass is SQLAlchemy's DeclarativeMeta); None for any other object."""
    return getattr(base, "_sa_registry", None) if isinstance(base, type) else None


def all_registries() -> set[Any]:
    """Every ORM registry alive in the process: the mappers configured before sa_dynamo was
    imported raised no ``mapper_configured`` event it could hear."""
    return mapperlib._all_registries()


def unit_of_work_flush(execution_options: Any) -> bool:
    """Whether a statement is the ORM's flush of loaded objects: the unit of work executes its
    INSERT/UPDATE/DELETE with the mapper's own compiled cache, and no other caller does."""
    return execution_options.get("compiled_cache") is not None


def text_bindparams(text: Any) -> dict[str, Any]:
    """The bind parameters a text() declares, with their types and values."""
    return dict(text._bindparams)


# -- compilation --------------------------------------------------------------------------------


def dml_compile_state(statement: Any, sql_compiler: Any, **kw: Any) -> Any:
    return statement._compile_state_factory(statement, sql_compiler, **kw)


def crud_params(sql_compiler: Any, statement: Any, compile_state: Any, **kw: Any) -> Any:
    """The columns and rendered values of an INSERT/UPDATE, as SQLAlchemy's compiler gets them."""
    return crud._get_crud_params(sql_compiler, statement, compile_state, True, **kw)


def placeholder(sql_compiler: Any, name: str) -> str:
    """How the compiler writes the bind parameter ``name`` before positions are assigned."""
    return sql_compiler.compilation_bindtemplate % {"name": sql_compiler.escaped_bind_names.get(name, name)}


def retyped(bind: Any, type_: Any) -> Any:
    """The bind parameter with another type (its processors), still the statement's own."""
    return bind._with_binary_element_type(type_)


def alternate_names(label: Any) -> tuple[Any, ...]:
    """The other names a labelled column answers to in a result row."""
    return tuple(label._alt_names)


def bind_processors(compiled: Any) -> dict[str, Any]:
    """Each bind parameter's processor (Python value -> the value sent), by parameter name."""
    return dict(compiled._bind_processors)


def expanded_parameters(context: Any) -> dict[str, list[str]]:
    """An execution's IN lists: each expanding parameter's name -> the names it became."""
    return context._expanded_parameters


# -- engines ----------------------------------------------------------------------------------------


def pool_capacity(pool: Any) -> int | None:
    """How many connections a pool hands out at once at most (a QueuePool's pool_size plus its
    max_overflow); None for a pool without that bound (NullPool, StaticPool, unlimited overflow)."""
    overflow = getattr(pool, "_max_overflow", None)
    if not isinstance(overflow, int) or overflow < 0:
        return None
    return pool.size() + overflow


# -- results --------------------------------------------------------------------------------------


def underlying_result(result: Any) -> Any:
    """The result a wrapper reads from: an AsyncResult's, a ScalarResult's or MappingsResult's
    (``_real_result``), an ORM result's cursor result (``raw``); the result itself otherwise."""
    while True:
        inner = getattr(result, "_real_result", None)
        if inner is None:
            inner = getattr(result, "raw", None)
        if inner is None or inner is result:
            return result
        result = inner


# -- asyncio: SQLAlchemy's greenlet bridge --------------------------------------------------------


def await_(awaitable: Any) -> Any:
    """The awaitable's result, awaited by the event loop that runs this greenlet (what
    SQLAlchemy's own async drivers call; public in no release)."""
    return util.await_only(awaitable)


def in_greenlet() -> bool:
    """Whether this code runs under ``greenlet_spawn``, where ``await_`` may be called."""
    return concurrency.in_greenlet()


async def greenlet_spawn(function: Any, *args: Any, **kwargs: Any) -> Any:
    """Run synchronous SQLAlchemy code from a coroutine, as AsyncSession.run_sync does."""
    return await util.greenlet_spawn(function, *args, **kwargs)


# -- hooks the dialect overrides ------------------------------------------------------------------

HOOKS: dict[tuple[type, str], tuple[str, ...]] = {
    (compiler.SQLCompiler, "_compose_select_body"): (
        "self",
        "text",
        "select",
        "compile_state",
        "inner_columns",
        "froms",
        "byfrom",
        "toplevel",
        "kwargs",
    ),
    (compiler.SQLCompiler, "_literal_execute_expanding_parameter"): ("self", "name", "parameter", "values"),
    (compiler.IdentifierPreparer, "_requires_quotes"): ("self", "value"),
    (DefaultExecutionContext, "_init_compiled"): (
        "cls",
        "dialect",
        "connection",
        "dbapi_connection",
        "execution_options",
        "compiled",
        "parameters",
        "invoked_statement",
        "extracted_parameters",
    ),
    (DefaultExecutionContext, "_init_statement"): (
        "cls",
        "dialect",
        "connection",
        "dbapi_connection",
        "execution_options",
        "statement",
        "parameters",
    ),
    (crud, "_get_crud_params"): ("compiler", "stmt", "compile_state", "toplevel"),
}


def check() -> list[str]:
    """The hooks this SQLAlchemy lacks or has reshaped (empty when all are as expected)."""
    problems = []
    for (owner, name), expected in HOOKS.items():
        found = getattr(owner, name, None)
        if found is None:
            problems.append(f"{owner.__name__}.{name} is gone")
            continue
        parameters = tuple(inspect.signature(inspect.unwrap(found)).parameters)
        if isinstance(inspect.getattr_static(owner, name), classmethod):
            parameters = ("cls", *parameters)
        if parameters[: len(expected)] != expected:
            problems.append(f"{owner.__name__}.{name} takes {parameters}, not {expected}")
    return problems
