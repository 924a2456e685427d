"""Key templates: key attributes computed from other attributes, as single-table design does.

``__key_templates__ = {"pk": "CUSTOMER#{customer_id}", "sk": "ORDER#{order_id}"}`` on a mapped
class fills ``pk``/``sk`` on flush (and again when the sources change), and a query that pins
every source of a template gets the matching key condition, so ``Order.customer_id == "42"``
becomes a Query on ``"pk" = 'CUSTOMER#42'`` instead of a Scan (and ``customer_id.in_([...])`` a
Query on ``"pk" IN [...]``). A template whose source is None
leaves its attribute absent (the item drops out of that sparse index); never ``STATUS#None``.
"""

from __future__ import annotations

import string
from typing import Any, NamedTuple

from sqlalchemy import event, inspect
from sqlalchemy.exc import InvalidRequestError
from sqlalchemy.orm import Mapper, ORMExecuteState, Session
from sqlalchemy.sql import elements, operators

from ..dialect.key_schema import KeySchema, index_key_schema, key_schema
from ..exc import KeyTemplateError

ATTRIBUTE = "__key_templates__"


class KeyTemplate(NamedTuple):
    target: str
    text: str
    sources: tuple[str, ...]

    @classmethod
    def parse(cls, target: str, text: str) -> KeyTemplate:
        fields = tuple(name for _, name, _, _ in string.Formatter().parse(text) if name is not None)
        if any(not name or not name.isidentifier() for name in fields):
            raise KeyTemplateError(
                f"key template {text!r} for {target!r}: use {{attribute}} placeholders only"
            )
        return cls(target, text, fields)

    @property
    def prefix(self) -> str:
        """The literal text before the first placeholder: every value starts with it."""
        return next(iter(string.Formatter().parse(self.text)))[0] or ""

    def render(self, values: dict[str, Any]) -> str | None:
        if any(values.get(name) is None for name in self.sources):
            return None
        return self.text.format(**values)


def templates(class_: type) -> dict[str, KeyTemplate]:
    """The templates a class uses: its own plus those it inherits (a redefinition is an error)."""
    merged: dict[str, KeyTemplate] = {}
    owner: dict[str, type] = {}
    for klass in reversed(class_.__mro__):
        for target, text in klass.__dict__.get(ATTRIBUTE, {}).items():
            if target in merged and merged[target].text != text:
                raise KeyTemplateError(
                    f"{klass.__name__} redefines the key template of {target!r} ({text!r}) that "
                    f"{owner[target].__name__} already defines as {merged[target].text!r}: classes of one "
                    "hierarchy share their ancestors' templates; move the template down to the subclasses"
                )
            merged[target] = KeyTemplate.parse(target, text)
            owner[target] = klass
    return merged


def _check(mapper: Mapper) -> None:
    attributes = set(mapper.column_attrs.keys())
    for template in templates(mapper.class_).values():
        for name in (template.target, *template.sources):
            if name not in attributes:
                raise KeyTemplateError(
                    f"{mapper.class_.__name__}: key template {template.text!r} for {template.target!r} uses "
                    f"{name!r}, which {mapper.class_.__name__} does not map as a column attribute"
                )


def key_of(class_: type, **values: Any) -> tuple:
    """The primary key of the item the templates would write, for ``session.get()``."""
    mapper = inspect(class_)
    found = templates(class_)
    key = []
    for column in mapper.primary_key:
        attribute = mapper.get_property_by_column(column).key
        if attribute in found:
            key.append(found[attribute].render(values))
        else:
            key.append(values.get(attribute))
    if any(part is None for part in key):
        raise KeyTemplateError(
            f"{class_.__name__}: give every attribute its key templates use, got {sorted(values)}"
        )
    return tuple(key)


def _primary_key_attributes(mapper: Mapper) -> set[str]:
    return {mapper.get_property_by_column(column).key for column in mapper.primary_key}


def fill(mapper: Mapper, target: Any, updating: bool = False) -> None:
    """Set every templated attribute of ``target`` from its sources."""
    keys = _primary_key_attributes(mapper)
    for template in templates(mapper.class_).values():
        values = {name: getattr(target, name) for name in template.sources}
        value = template.render(values)
        current = getattr(target, template.target)
        if template.target in keys:
            if value is None:
                missing = [name for name in template.sources if values[name] is None]
                raise InvalidRequestError(
                    f"{mapper.class_.__name__}.{template.target} is a key built from {template.text!r}, but "
                    f"{', '.join(missing)} is None: set it before flushing"
                )
            if updating and value != current:
                raise InvalidRequestError(
                    f"changing {', '.join(template.sources)} would move this {mapper.class_.__name__} from key "
                    f"{template.target}={current!r} to {value!r}; DynamoDB keys are immutable: delete the object "
                    "and add a new one"
                )
        if value != current:
            setattr(target, template.target, value)


class Pinned(NamedTuple):
    """What a query's AND terms say of the mapper's attributes."""

    values: dict[str, Any]  # attribute == value
    listed: dict[str, list[Any]]  # attribute IN [values]
    compared: set[str]  # every attribute some term compares with a value


def _pinned(terms: list[Any], mapper: Mapper) -> Pinned:
    table = mapper.local_table
    by_column = {column.name: prop.key for prop in mapper.column_attrs for column in prop.columns}
    pinned, listed, compared = {}, {}, set()
    for term in terms:
        if not isinstance(term, elements.BinaryExpression):
            continue
        left, right = term.left, term.right
        if (
            isinstance(left, elements.ColumnClause)
            and getattr(left, "table", None) is table
            and isinstance(right, elements.BindParameter)
            and left.name in by_column
        ):
            compared.add(by_column[left.name])
            if term.operator is operators.eq:
                pinned[by_column[left.name]] = right.effective_value
            elif term.operator is operators.in_op and right.expanding:
                listed[by_column[left.name]] = list(right.effective_value or ())
    return Pinned(pinned, listed, compared)


def _flatten(clause: Any) -> list[Any]:
    if clause is None:
        return []
    if isinstance(clause, elements.BooleanClauseList) and clause.operator is operators.and_:
        return [term for part in clause.clauses for term in _flatten(part)]
    if isinstance(clause, elements.Grouping):
        return _flatten(clause.element)
    return [clause]


def _listed_values(template: KeyTemplate, query: Pinned) -> list[str] | None:
    """The template's values when one of its sources is listed by IN and the others are pinned:
    ``company_id IN [1, 2]`` makes ``pk IN ['COMPANY#1', 'COMPANY#2']``."""
    listed = [name for name in template.sources if name in query.listed and name not in query.values]
    if len(listed) != 1:
        return None
    rendered = [template.render({**query.values, listed[0]: value}) for value in query.listed[listed[0]]]
    return None if None in rendered else rendered


def _conditions_for(mapper: Mapper, keys: KeySchema, found: dict, query: Pinned) -> list[Any] | None:
    """Conditions on one key schema (table or index), or None when its partition key stays unknown."""
    pinned = dict(query.values)
    by_column = {column.name: prop.key for prop in mapper.column_attrs for column in prop.columns}
    hash_attribute = by_column.get(keys.hash_key.name)
    range_attribute = by_column.get(keys.range_key.name) if keys.range_key is not None else None
    conditions = []
    for attribute in (hash_attribute, range_attribute):
        template = found.get(attribute)
        if template is None or attribute in pinned:
            continue
        value = template.render(pinned)
        if value is not None:
            pinned[attribute] = value
            conditions.append(mapper.columns[attribute] == value)
        elif attribute == hash_attribute and (values := _listed_values(template, query)) is not None:
            pinned[attribute] = values
            conditions.append(mapper.columns[attribute].in_(values))
    compared = query.compared
    if hash_attribute not in pinned:
        return None
    template = found.get(range_attribute)
    if template is not None and range_attribute not in compared | pinned.keys() and template.prefix:
        # Every item of this class has a sort key starting with the template's literal prefix.
        conditions.append(mapper.columns[range_attribute].startswith(template.prefix, autoescape=True))
    return conditions


def key_conditions(mapper: Mapper, whereclause: Any) -> list[Any]:
    """Key conditions implied by a query's WHERE through the class's templates: on the table's
    key when the templates pin its partition key, else on the first index whose key they pin."""
    found = templates(mapper.class_)
    if not found:
        return []
    query = _pinned(_flatten(whereclause), mapper)
    table = mapper.local_table
    schemas = [key_schema(table)] + [
        index_key_schema(i) for i in sorted(table.indexes, key=lambda i: i.name or "")
    ]
    for keys in schemas:
        conditions = _conditions_for(mapper, keys, found, query)
        if conditions is not None:
            return conditions
    return []


@event.listens_for(Mapper, "mapper_configured")
def _validate(mapper: Mapper, class_: type) -> None:
    _check(mapper)


@event.listens_for(Mapper, "before_insert")
def _before_insert(mapper: Mapper, connection: Any, target: Any) -> None:
    fill(mapper, target)


@event.listens_for(Mapper, "before_update")
def _before_update(mapper: Mapper, connection: Any, target: Any) -> None:
    fill(mapper, target, updating=True)


@event.listens_for(Session, "do_orm_execute")
def _add_key_conditions(state: ORMExecuteState) -> None:
    # Only the query's own entity: relationship loaders write their own criteria, often on aliases.
    mapper = state.bind_mapper
    if not state.is_select or state.is_relationship_load or mapper is None:
        return
    conditions = key_conditions(mapper, state.statement.whereclause)
    if conditions:
        state.statement = state.statement.where(*conditions)
