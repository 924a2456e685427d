"""Key conditions implied by a query's conditions on the sources of key templates.

``Order.customer_id == "42"`` becomes ``"pk" = 'CUSTOMER#42'`` (a Query instead of a Scan),
``customer_id.in_([...])`` a Query on ``"pk" IN [...]``, and a range on the source of an
order-keeping sort-key template (``Product.price.between(10, 20)`` with ``"{price:010.2f}"``) a
range on the formatted sort key. The conditions on the sources stay as filters, so the rows are
exactly those the query asks for; the key conditions only narrow what DynamoDB reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from sqlalchemy.exc import CompileError
from sqlalchemy.orm import Mapper, ORMExecuteState
from sqlalchemy.sql import elements, operators

from ..dialect.key_schema import KeySchema, index_key_schema, key_schema
from ..dialect.operators import ORDERINGS, RANGE_KEY, REQUIRES_PRESENCE
from ..dialect.write_rules import stored_value
from ..exc import KeyTemplateError
from .key_formats import keeps_order
from .key_templates import KeyTemplate, primary_key_attributes, templates
from .scope import on_dynamodb

EMPTY: Mapping[str, Any] = MappingProxyType({})
_RANGES = RANGE_KEY & ORDERINGS  # <, <=, >, >= and BETWEEN
# A format may give two values one key (12.499 and 12.50 are both "12.50" in {price:.2f}, two
# times in one second one "%H:%M:%S"): a bound's own key may hold values on both sides of it,
# so a key range always includes it, and the WHERE on the source decides.
_INCLUSIVE = {operators.gt: operators.ge, operators.lt: operators.le}


class Pinned(NamedTuple):
    """What a query's AND terms say of the mapper's attributes."""

    values: dict[str, Any]  # attribute == value
    listed: dict[str, list[Any]]  # attribute IN [values]
    compared: set[str]  # every attribute some term compares with a value
    ranges: dict[str, list[tuple[Any, tuple[Any, ...]]]]  # attribute -> (operator, bound values)
    present: set[str]  # every attribute that each match has (not NULL)


def _value(bind: elements.BindParameter, parameters: Mapping[str, Any]) -> Any:
    """A bound value; a relationship load passes its values as execution parameters instead."""
    return parameters.get(bind.key, bind.effective_value)


def _bound_values(right: Any, parameters: Mapping[str, Any]) -> tuple[Any, ...] | None:
    if isinstance(right, elements.BindParameter):
        return (_value(right, parameters),)
    if isinstance(right, (elements.True_, elements.False_)):  # ``Post.published == True``
        return (isinstance(right, elements.True_),)
    clauses = getattr(right, "clauses", ())
    if len(clauses) == 2 and all(isinstance(c, elements.BindParameter) for c in clauses):
        return tuple(_value(c, parameters) for c in clauses)  # BETWEEN's two bounds
    return None


def _column_first(term: elements.BinaryExpression) -> tuple[Any, Any]:
    """(column, value side) of a comparison; a lazy load writes ``:param = child.column``."""
    if term.operator is operators.eq and isinstance(term.left, elements.BindParameter):
        return term.right, term.left
    return term.left, term.right


def _pinned(terms: list[Any], mapper: Mapper, parameters: Mapping[str, Any] = EMPTY) -> Pinned:
    table = mapper.local_table
    by_column = {column.name: prop.key for prop in mapper.column_attrs for column in prop.columns}
    pinned, listed, compared, ranges, present = {}, {}, set(), {}, set()
    for term in terms:
        if not isinstance(term, elements.BinaryExpression):
            continue
        left, right = _column_first(term)
        if not (
            isinstance(left, elements.ColumnClause)
            and getattr(left, "table", None) is table
            and left.name in by_column
        ):
            continue
        attribute = by_column[left.name]
        if term.operator is operators.is_not and isinstance(right, elements.Null):
            present.add(attribute)
        values = _bound_values(right, parameters)
        if values is None:
            continue
        compared.add(attribute)
        if term.operator in REQUIRES_PRESENCE:  # every match has the attribute
            present.add(attribute)
        values = tuple(_stored(left, value) for value in values)
        if term.operator is operators.eq:
            pinned[attribute] = values[0]
        elif term.operator is operators.in_op and right.expanding:
            listed[attribute] = list(values[0] or ())
        elif term.operator in _RANGES and None not in values:
            ranges.setdefault(attribute, []).append((term.operator, values))
    return Pinned(pinned, listed, compared, ranges, present)


def _stored(column: Any, value: Any) -> Any:
    """A compared value as the column would store it, which is what its key is rendered from
    (an IN list's values each)."""
    if isinstance(value, (list, tuple)):
        return [stored_value(column.type, v) for v in value]
    return stored_value(column.type, value)


def _flatten(clause: Any) -> list[Any]:
    if clause is None:
        return []
    if isinstance(clause, elements.BooleanClauseList) and clause.operator is operators.and_:
        return [term for part in clause.clauses for term in _flatten(part)]
    if isinstance(clause, elements.Grouping):
        return _flatten(clause.element)
    return [clause]


def read_where(criteria: Iterable[Any], mapper: Mapper, parameters: Mapping[str, Any] = EMPTY) -> Pinned:
    """What the AND terms of ``criteria`` (a WHERE, or its terms as given) say of the mapper's
    attributes; ``parameters`` are the values of binds that carry none."""
    return _pinned([term for criterion in criteria for term in _flatten(criterion)], mapper, parameters)


def _listed_values(template: KeyTemplate, query: Pinned) -> list[str] | None:
    """The template's values when one of its sources is listed by IN and the others are pinned:
    ``company_id IN [1, 2]`` makes ``pk IN ['COMPANY#1', 'COMPANY#2']``."""
    listed = [name for name in template.sources if name in query.listed and name not in query.values]
    if len(listed) != 1:
        return None
    rendered = [_render(template, {**query.values, listed[0]: value}) for value in query.listed[listed[0]]]
    return None if None in rendered else rendered


def _render(template: KeyTemplate, values: Mapping[str, Any]) -> str | None:
    """The key ``values`` give, or None when the template cannot hold them (a negative number
    in a fixed-width format, text in a number's): no stored key comes from such a value, so the
    query reads without this key condition and its WHERE decides."""
    try:
        return template.render(values)
    except (KeyTemplateError, TypeError, ValueError):
        return None


def _ranged_source(template: KeyTemplate, query: Pinned) -> str | None:
    """The one source of ``template`` a range constrains while every other source is pinned."""
    free = [name for name in template.sources if name not in query.values]
    return free[0] if len(free) == 1 and free[0] in query.ranges else None


def _range_conditions(mapper: Mapper, template: KeyTemplate, source: str, query: Pinned) -> list[Any]:
    """The ranges on ``source`` as ranges on the template's attribute; refused, with the fix, when
    the template's text does not sort as the source does."""
    column = mapper.columns[template.target]
    python_type = _python_type(mapper.columns[source])
    if template.function is not None or not keeps_order(
        template.fields, template.trailing, source, python_type
    ):
        raise CompileError(
            f"a range on {mapper.class_.__name__}.{source} cannot become a range on the sort key "
            f"{template.target!r}: its template {template.text!r} does not sort as {source} does (keys "
            "compare as text, so '10' < '9'). Give the placeholder a fixed width ({"
            f"{source}:010.2f}} for numbers, {{{source}:%Y-%m-%dT%H:%M:%S}} for datetimes), or compare "
            f"{template.target} itself"
        )
    conditions = []
    for operator, bounds in query.ranges[source]:
        keys = [_render(template, {**query.values, source: bound}) for bound in bounds]
        if None in keys:
            continue  # a bound the format cannot hold (negative, too wide): the filter decides
        if operator is operators.between_op:
            conditions.append(column.between(*keys))
        else:
            conditions.append(_INCLUSIVE.get(operator, operator)(column, keys[0]))
    return conditions


def _python_type(column: Any) -> type | None:
    try:
        return column.type.python_type
    except NotImplementedError:
        return None


def _conditions_for(
    mapper: Mapper, keys: KeySchema, found: dict, query: Pinned, index: bool
) -> list[Any] | None:
    """Conditions on one key schema (table or index), or None when its partition key stays unknown
    (or when the index may lack items the query wants)."""
    pinned = dict(query.values)
    by_column = {column.name: prop.key for prop in mapper.column_attrs for column in prop.columns}
    hash_attribute = by_column.get(keys.hash_key.name)
    range_attribute = by_column.get(keys.range_key.name) if keys.range_key is not None else None
    conditions = []
    for attribute in (hash_attribute, range_attribute):
        template = found.get(attribute)
        if template is None or attribute in pinned:
            continue
        value = _render(template, pinned)
        if value is not None:
            pinned[attribute] = value
            conditions.append(mapper.columns[attribute] == value)
        elif attribute == hash_attribute and (values := _listed_values(template, query)) is not None:
            pinned[attribute] = values
            conditions.append(mapper.columns[attribute].in_(values))
    if hash_attribute not in pinned:
        return None
    template = found.get(range_attribute)
    if template is None or range_attribute in query.compared | pinned.keys():
        return conditions
    if index and not _written_for_every_match(mapper, found, template, query):
        # DynamoDB leaves an item without the index's sort key out of the index: the planner's
        # rule, an index is read only when it holds every match, holds for templates too.
        return None
    source = _ranged_source(template, query)
    if source is not None:
        return conditions + _range_conditions(mapper, template, source, query)
    if template.prefix:
        # Every match has a sort key starting with the template's literal prefix.
        conditions.append(mapper.columns[range_attribute].startswith(template.prefix, autoescape=True))
    elif index:
        # Every match has the index's sort key, so the index holds every match.
        conditions.append(mapper.columns[range_attribute].is_not(None))
    return conditions


def _written_for_every_match(mapper: Mapper, found: dict, template: KeyTemplate, query: Pinned) -> bool:
    """Whether every item the query matches has the template's attribute: each source is a
    column that is never None, a source of the primary key (no item is written without it), or
    one the WHERE compares in a way no NULL satisfies. A computed key may return None whatever
    its sources."""
    keys = primary_key_attributes(mapper)
    in_key = {
        s for target in keys & found.keys() if found[target].function is None for s in found[target].sources
    }
    return template.function is None and all(
        not mapper.columns[s].nullable or s in in_key or s in query.present for s in template.sources
    )


def key_conditions(mapper: Mapper, whereclause: Any, parameters: Mapping[str, Any] = EMPTY) -> list[Any]:
    """Key conditions implied by a query's WHERE through the class's templates: on the table's
    key when the templates pin its partition key, else on the first index whose key they pin.
    ``parameters`` are the values of binds that carry none (a relationship load's)."""
    found = templates(mapper.class_)
    if not found:
        return []
    query = read_where([whereclause], mapper, parameters)
    table = mapper.local_table
    schemas = [(key_schema(table), False)] + [
        (index_key_schema(i), True) for i in sorted(table.indexes, key=lambda i: i.name or "")
    ]
    first = None
    for keys, index in schemas:
        conditions = _conditions_for(mapper, keys, found, query, index)
        if conditions is None:
            continue
        if keys.range_key is not None and any(_on(c, keys.range_key.name) for c in conditions):
            return conditions  # the sort key the query pins or ranges over: the fewest items read
        first = conditions if first is None else first
    return first or []


def _on(condition: Any, name: str) -> bool:
    """Whether ``condition`` is an equality or a range (not the prefix) on attribute ``name``."""
    return (
        isinstance(condition, elements.BinaryExpression)
        and condition.operator in _RANGES | {operators.eq}
        and getattr(condition.left, "name", None) == name
    )


def add_key_conditions(state: ORMExecuteState) -> None:
    # Conditions on the query's own entity only: a relationship loader's criteria on an alias
    # (a JOIN) are not on the mapper's table and pin nothing. A lazy load's are, with its values
    # in the execution parameters: a relationship joined on template sources loads by Query.
    mapper = state.bind_mapper
    if not state.is_select or mapper is None or not templates(mapper.class_):
        return
    if not on_dynamodb(state, mapper):
        return
    parameters = state.parameters if isinstance(state.parameters, Mapping) else EMPTY
    conditions = key_conditions(mapper, state.statement.whereclause, parameters)
    if conditions:
        state.statement = state.statement.where(*conditions)
