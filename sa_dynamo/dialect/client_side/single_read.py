"""What a SELECT leaves to the client: a list of full keys read as a batch of single-item
SELECTs (PartiQL's batch get), and an ORDER BY that DynamoDB cannot serve, sorted by the driver
(dbapi/ordering.py) once it holds every row.

DynamoDB sorts one partition, by its sort key. Any other order is exact only over rows the
client holds: a bounded set (full keys; partitions of a table without a sort key, one item each)
is sorted without asking; a Query or a Scan only when the user opts in with
``dynamodb_client_sort=<rows held at most>`` (more rows than that are an error, never a shorter
result). OFFSET is the driver's too: the rows it skips are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy.sql import elements, operators

from ...exc import cannot_express
from ...plan import Plan
from ...sqlalchemy_private import label_reference
from ..compiler.access_path import attribute_names
from ..compiler.expressions import refuse
from ..compiler.normal_form import is_column, is_on, is_partition_or
from ..compiler.predicate import predicate_of
from ..key_schema import KeySchema
from .caps import CLIENT_SORT

_ATTRIBUTE = re.compile(r'"(?:[^"]|"")*"')


@dataclass(frozen=True)
class BatchGet:
    """A read of full keys: a single-item SELECT whose keys the driver sends as BatchGetItem,
    100 a request.

    ``keys`` is the IN list's expanding parameter; its values come first among the statement's
    parameters (key conditions are rendered first). ``always`` is False for an IN over the
    partition keys of a table without a sort key: a Query up to 50 keys, a batch beyond.
    ``hidden`` counts the trailing columns ``statement`` projects beyond the compiled one, for
    the filter tested on the client (``keep``, the WHERE without the key list).
    """

    statement: str
    width: int
    keys: str
    always: bool
    hidden: int
    plan: Plan
    keep: Any

    def distinct_keys(self, values: Any) -> list[Any]:
        """The keys read, each once (SQL's IN is membership; DynamoDB refuses a call that
        names one key twice): tuples of the key's width, or partition-key values."""
        if not self.always:
            return list(dict.fromkeys(values))
        keys = [tuple(key) if isinstance(key, (tuple, list)) else (key,) for key in values]
        if any(len(key) != self.width for key in keys):
            refuse(
                "a key of the wrong length in tuple_(...).in_()",
                f"give each key as a tuple of {self.width} values, in the tuple's order",
            )
        return list(dict.fromkeys(keys))


@dataclass(frozen=True)
class ClientOrder:
    """An ORDER BY the driver applies: (column index, descending, nulls first) over the
    projected columns (dbapi/ordering.py), and, for a Query, the refusal to raise unless
    dynamodb_client_sort is given."""

    order: tuple[tuple[int, bool, bool | None], ...]
    opt_in: str


NULLS_PLACES = {operators.nulls_first_op: True, operators.nulls_last_op: False}


def named(entry: Any, selected: list[Any]) -> Any:
    """A GROUP BY or ORDER BY entry that names a label of the select list, as what it labels."""
    if isinstance(entry, str):
        found = next((c for c in selected if getattr(c, "name", None) == entry), None)
        if found is None:
            refuse(f"the label {entry!r}", "name a label of the select list")
        return found.element if isinstance(found, elements.Label) else found
    return entry.element if isinstance(entry, elements.Label) else entry


def order_entry(clause: Any, selected: list[Any]) -> tuple[Any, bool, bool | None]:
    """(element, descending, nulls first) of one ORDER BY entry (None: SQL's default place of
    NULL); a label of the select list, by its name or itself, is what it labels."""
    element, descending, nulls_first = label_reference(clause), False, None
    if isinstance(element, elements.UnaryExpression) and element.modifier in NULLS_PLACES:
        element, nulls_first = element.element, NULLS_PLACES[element.modifier]
    if isinstance(element, elements.UnaryExpression) and element.modifier in (
        operators.asc_op,
        operators.desc_op,
    ):
        element, descending = element.element, element.modifier is operators.desc_op
    return named(label_reference(element), selected), descending, nulls_first


def order_columns(select_order: tuple[Any, ...], selected: list[Any]) -> list[tuple[Any, bool, bool | None]]:
    """ORDER BY as (column, descending, nulls first) triples (None: SQL's default place of
    NULL), a label as what it labels; anything but a plain attribute is refused."""
    orders = []
    for clause in select_order:
        element, descending, nulls_first = order_entry(clause, selected)
        if not (isinstance(element, elements.ColumnClause) and not element.is_literal):
            refuse(
                f"ORDER BY {element}",
                "order by attributes, ascending or descending (expressions are not translated); sort "
                "the rows in Python",
            )
        orders.append((element, descending, nulls_first))
    return orders


def served(
    keys: KeySchema, terms: list[Any], orders: list[tuple[Any, bool, bool | None]], batch: bool
) -> bool:
    """Whether DynamoDB sorts it: the partition key pinned by == and only its sort key ordered
    (which every item has: NULLS FIRST or LAST changes nothing)."""
    return (
        not batch
        and any(is_on(t, keys.hash_key, {operators.eq}) for t in terms)
        and keys.range_key is not None
        and all(is_column(column, keys.range_key) for column, _, _ in orders)
    )


def _pinned(keys: KeySchema, terms: list[Any]) -> bool:
    return any(
        is_on(t, keys.hash_key, {operators.eq, operators.in_op}) or is_partition_or(t, keys.hash_key)
        for t in terms
    )


def bounded(keys: KeySchema, table_read: bool, terms: list[Any], batch: bool) -> bool:
    """Whether a read's rows are a set bounded by the keys the WHERE names: full keys (a key
    list, or the whole key pinned by ==), or partitions of a table without a sort key."""
    whole_key = (
        keys.range_key is not None
        and any(is_on(t, keys.hash_key, {operators.eq}) for t in terms)
        and any(is_on(t, keys.range_key, {operators.eq}) for t in terms)
    )
    return batch or (table_read and _pinned(keys, terms) and (keys.range_key is None or whole_key))


def client_ordering(
    keys: KeySchema, table_read: bool, terms: list[Any], batch: bool, passed_over: str = ""
) -> str:
    """For an ORDER BY the client applies: "" when the rows are a bounded set, else the
    refusal for a Query or a Scan without dynamodb_client_sort; a Scan's says why an index the
    WHERE pins was passed over (``passed_over``), which is the advice that fits."""
    if bounded(keys, table_read, terms, batch):
        return ""
    pinned = _pinned(keys, terms)
    sort_key = keys.range_key.name if keys.range_key is not None else None
    exact = (
        f"select full keys with tuple_({keys.hash_key.name}, {sort_key}).in_(keys)"
        if sort_key
        else f"select keys with {keys.hash_key.name}.in_(keys)"
    )
    if not pinned:
        partitions = ", or pin the partition key with == or in_()" if sort_key else ""
        return cannot_express(
            f"ORDER BY on a scan ({passed_over})" if passed_over else "ORDER BY on a scan",
            f"DynamoDB sorts only within a partition; pass the execution option {CLIENT_SORT}=<max rows> "
            "to sort up to that many rows on the client (the scan itself follows dynamodb_scan), or "
            f"{exact} (sorted on the client){partitions}",
        )
    return cannot_express(
        "this ORDER BY",
        f"DynamoDB sorts one partition (pinned by ==) by its sort key{f' {sort_key}' if sort_key else ''} "
        f"only; pass the execution option {CLIENT_SORT}=<max rows> to sort up to that many rows on the "
        f"client, or {exact}",
    )


def projected_index(inner_columns: list[str], name: str) -> int | None:
    """Where the attribute ``name`` (quoted) is in the select list, if it is."""
    return next((i for i, c in enumerate(inner_columns) if c == name), None)


def plain_attributes(inner_columns: list[str]) -> bool:
    """Whether the select list names whole attributes only: a batch read returns a path inside
    a document nested in its attribute, not under the path's result key."""
    return all(_ATTRIBUTE.fullmatch(c) for c in inner_columns)


class ClientSideReads:
    """The compiler's part in one read the driver finishes: an ORDER BY it sorts, a list of full
    keys it reads as a batch. Reads what the WHERE part (compiler/where.py) found."""

    def __init__(self, compiler: Any, where: Any):
        self.compiler, self.where = compiler, where

    def client_order(
        self,
        keys: KeySchema,
        table_read: bool,
        terms: list[Any],
        key_list: bool,
        orders: list,
        columns: list,
        passed_over: str = "",
    ) -> list[str]:
        """Record an ORDER BY the driver applies (client_side.py); the select list with the
        ordered attributes it lacks appended, read but not returned."""
        opt_in = client_ordering(keys, table_read, terms, key_list, passed_over)
        order = []
        star = self.compiler.record.star_columns  # SELECT * beside a bag: its rows have these columns
        for column, descending, nulls_first in orders:
            name = self.compiler.preparer.quote(column.name)
            position = projected_index(columns, name)
            if columns == ["*"]:  # every attribute is read already: nothing may follow the *
                if star is None or column.name not in star[0]:
                    refuse(
                        f"ORDER BY {column.name} on the client of a SELECT *",
                        "select the columns to return, the ordered ones among them",
                    )
                position = star[0].index(column.name)
            elif position is None:
                columns, position = [*columns, name], len(columns)
                self.compiler.record.hidden_columns += 1
            order.append((position, descending, nulls_first))
        self.compiler.record.client_order = ClientOrder(tuple(order), opt_in)
        return columns

    def batch_get(self, table: str, source: str, keys: KeySchema, columns: list[str]) -> BatchGet | None:
        """The batch of single-item SELECTs that reads a key list: a batch SELECT takes no filter,
        so the rest of the WHERE is tested on the client, on attributes projected for it."""
        where, quote = self.where, self.compiler.preparer.quote
        always = bool(where.key_list_columns)
        rest = [t for t in where.terms if t is not where.key_term]
        keep = predicate_of(rest) if rest else None
        if self.compiler.record.count is not None or not plain_attributes(columns) or (rest and keep is None):
            if always:
                refuse(
                    "COUNT, a JSON path or this filter beside tuple_(...).in_()",
                    "select whole attributes, and count or filter the rows in Python",
                )
            return None  # a Query of at most 50 keys, as before
        filtered = [
            name
            for name in map(quote, sorted(attribute_names(rest)))
            if projected_index(columns, name) is None
        ]
        key_columns = where.key_list_columns or [keys.hash_key]
        key_condition = " AND ".join(f"{quote(c.name)} = ?" for c in key_columns)
        statement = f"SELECT {', '.join([*columns, *filtered])} FROM {source} WHERE {key_condition}"
        plan = Plan("BatchGetItem", table, None, key_condition, where.filter)
        return BatchGet(
            statement, len(key_columns), where.partition_key_list, always, len(filtered), plan, keep
        )
