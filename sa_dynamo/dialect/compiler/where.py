"""What every statement shares: the one table it reads or writes, and its WHERE, split into the
key conditions DynamoDB reads by and one filter group, with the same WHERE as a Python predicate.

Statement shape (partiql-reference.md §0, §15): key conditions first, every other condition in
one parenthesised group, because DynamoDB Local silently drops key conditions of some flat AND
chains.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.sql import elements, operators
from sqlalchemy.sql.schema import Table
from sqlalchemy.sql.selectable import Join

from ...dbapi.limits import MAX_PARTITION_KEYS
from ...exc import refuse
from ..key_schema import KeySchema
from ..operators import HASH_KEY, NULL_NEVER_TRUE, RANGE_KEY
from .conditions import compared_parameters
from .normal_form import is_on, is_partition_or, key_tuple_in, table_of, terms_of
from .predicate import predicate_of


class Where:
    """A statement's table and WHERE, for the compiler that holds this part: the WHERE's text,
    and what it found for the plan and the client side's reads (the public attributes)."""

    def __init__(self, compiler: Any, conditions: Any):
        self.compiler, self.conditions = compiler, conditions
        self.terms: list[Any] = []  # the WHERE's terms, constants folded
        self.key_term: Any = None  # the term on the partition key (an IN of full keys, too)
        self.key_condition = ""  # the key conditions' text
        self.filter = ""  # every other test's text
        self.hash_pinned = False  # the partition key is pinned: a Query, not a Scan
        self.whole_key = False  # == on every key attribute: one item
        self.key_list_columns: list[Any] | None = None  # tuple_(...).in_(): the key, in its order
        self.partition_key_list: str | None = None  # the expanding parameter of an IN on the partition key
        self.driver_filter = ""  # the text of the tests the driver applies after reading, not sent

    def single_table(self, from_: Any, statement: str) -> Table:
        from_ = table_of(from_)
        if isinstance(from_, Table):
            if from_.schema is not None:
                refuse(
                    f"a schema-qualified table ({from_.schema}.{from_.name})",
                    "DynamoDB has no schemas; drop schema= from the Table",
                )
            return from_
        what = "JOIN" if isinstance(from_, Join) else f"{statement} from a subquery or {type(from_).__name__}"
        refuse(
            what,
            "name one table; a SELECT joins tables by key, a write does not, and subqueries are not "
            "available (run one as its own statement and pass its rows as parameters)",
        )

    def folded_terms(self, criteria: Any) -> list[Any]:
        """The WHERE's terms with constant TRUE dropped; a constant FALSE means no row can match.
        Reading an index, its key attributes are in every item read: IS [NOT] NULL of them folds."""
        terms = terms_of(criteria, self.conditions.index_keys)
        if any(isinstance(t, elements.False_) for t in terms):
            self.compiler.record.always_empty = True
        return [t for t in terms if not isinstance(t, (elements.True_, elements.False_))]

    def render(
        self,
        keys: KeySchema,
        criteria: Any,
        full_key: str | None = None,
        table_hash: Any = None,
        kinds_read: str | None = None,
        **kw: Any,
    ) -> str:
        """The WHERE's text (see _render_where), and the same WHERE as a Python predicate, built after
        the text so that a refused construct is refused in the compiler's words. ``kinds_read``:
        the discriminator attribute whose IN test the driver applies after reading, not DynamoDB
        (constructs.kinds_after_reading)."""
        terms = self.terms = self.folded_terms(criteria)
        text = self._render_where(keys, terms, full_key, table_hash, kinds_read, **kw)
        names = {bind.key: name for bind, name in self.compiler.bind_names.items()}  # LIKE renders a copy
        for term in terms:
            if isinstance(term, elements.BinaryExpression) and term.operator in NULL_NEVER_TRUE:
                for bind in compared_parameters(term):
                    if names.get(bind.key) in self.compiler.record.value_parameters:
                        self.compiler.record.value_parameters[names[bind.key]] = True
        self.compiler.record.predicate = (
            (lambda item, values: False) if self.compiler.record.always_empty else predicate_of(terms)
        )
        return text

    def _render_where(
        self,
        keys: KeySchema,
        terms: list[Any],
        full_key: str | None = None,
        table_hash: Any = None,
        kinds_read: str | None = None,
        **kw: Any,
    ) -> str:
        """WHERE text: the key conditions first, every other condition in one group.

        With ``full_key`` (UPDATE/DELETE), the key conditions are the equalities on every key
        attribute (the writer checked there are: writes.py).
        ``table_hash`` is the table's partition key when a global index is read.
        """
        hash_ops = {operators.eq} if full_key else HASH_KEY
        range_ops = {operators.eq} if full_key else RANGE_KEY
        hash_term = next(
            (
                t
                for t in terms
                if is_on(t, keys.hash_key, hash_ops) or (not full_key and is_partition_or(t, keys.hash_key))
            ),
            None,
        )
        if not full_key and table_hash is None and hash_term is None:
            hash_term = next((t for t in terms if key_tuple_in(t, keys.columns)), None)
            self.key_list_columns = (hash_term is not None and key_tuple_in(hash_term, keys.columns)) or None
        range_term = None
        partition_or = hash_term is not None and is_partition_or(hash_term, keys.hash_key)
        if hash_term is not None and self.key_list_columns is None:
            range_term = next((t for t in terms if is_on(t, keys.range_key, range_ops)), None)
            if partition_or and len(hash_term.clauses) > MAX_PARTITION_KEYS:
                range_term = None
        partitions_in = partition_or and range_term is not None
        self.key_term = hash_term
        rest = [t for t in terms if t is not hash_term and t is not range_term]
        partial = hash_term is None or (keys.range_key is not None and range_term is None)
        retests = [t for t in rest if full_key and any(is_on(t, c, None) for c in keys.columns)]
        if retests and not partial:
            # DynamoDB refuses a second test of a key attribute in a write ("Multiple conditions on
            # same key"); with the key pinned by ==, the execution decides them on its values
            rest = [t for t in rest if t not in retests]
            for term in retests:  # compiled, not rendered: their parameters vary per execution
                self.compiler.process(term, **kw)
            pinned = {keys.hash_key.name: hash_term.right}
            if range_term is not None:
                pinned[keys.range_key.name] = range_term.right
            self.compiler.record.key_retests = (predicate_of(retests), pinned)
        key_parts = [] if hash_term is None else [self._partition_condition(hash_term, partitions_in, **kw)]
        if hash_term is not None and hash_term.operator is operators.in_op:
            values = (
                hash_term.right.element if isinstance(hash_term.right, elements.Grouping) else hash_term.right
            )
            self.partition_key_list = self.compiler.bind_names.get(values)
            if self.key_list_columns is None:
                self.compiler.record.partitions_in = self.partition_key_list
        elif partitions_in:
            self.compiler.record.partitions_in = len(hash_term.clauses)
        if range_term is not None:
            key_parts.append(self.compiler.process(range_term, as_key_condition=True, **kw))
        self.key_condition = " AND ".join(key_parts)
        self.hash_pinned = hash_term is not None
        self.whole_key = (
            hash_term is not None
            and hash_term.operator is operators.eq
            and (keys.range_key is None or (range_term is not None and range_term.operator is operators.eq))
        )
        if kinds_read is not None and not full_key and self.partition_key_list is None:
            rest = self._kinds_after_reading(rest, kinds_read, **kw)
        if not rest:
            self.filter = ""
            return self.key_condition
        self.filter = " AND ".join(self._filter_term(t, len(rest) > 1, table_hash, **kw) for t in rest)
        if len(rest) == 1 and not key_parts:
            return self.filter
        if not key_parts or (partition_or and not partitions_in):
            # A scan's AND chain: DynamoDB Local drops tests of key attributes from some flat
            # chains, even parenthesised; NOT (NOT (...)) was never wrong (partiql-reference §15).
            # After an OR of partition keys it drops every sort-key test, a key condition or
            # in the group (docs/partiql-findings.md): they go below NOT (NOT (...)) too.
            guarded = f"NOT (NOT ({self.filter}))"
            return " AND ".join([*key_parts, guarded])
        return " AND ".join([*key_parts, f"({self.filter})"])

    def _kinds_after_reading(self, rest: list[Any], attribute: str, **kw: Any) -> list[Any]:
        """``rest`` without its IN tests of the discriminator ``attribute``, which become the
        driver's filter (``record.driver_filter``: their predicate, exact as the overlay's). A
        COUNT stays DynamoDB's: the driver counts items it does not look at. Their parameters
        are compiled, not rendered: they vary per execution, and the predicate reads them."""
        record = self.compiler.record
        moved = [t for t in rest if _tests_kinds(t, attribute)]
        test = predicate_of(moved) if moved and record.count is None else None
        if test is None:
            return rest
        self.driver_filter = " AND ".join(
            self.compiler.process(t.self_group(against=operators.and_) if len(moved) > 1 else t, **kw)
            for t in moved
        )
        record.driver_filter = (test, attribute)
        return [t for t in rest if not any(t is m for m in moved)]

    def _partition_condition(self, term: Any, as_in: bool, **kw: Any) -> str:
        if self.key_list_columns:
            return self._key_list(term, **kw)
        if as_in:
            return self._partitions_in(term, **kw)
        return self.compiler.process(term.self_group(against=operators.and_), **kw)

    def _key_list(self, term: Any, **kw: Any) -> str:
        """``tuple_(pk, sk).in_(keys)``, shown as the IN it is (explain, the compiled text) and
        executed as a batch of single-item SELECTs, one per key (client_side/single_read.py)."""
        text = self.conditions.in_list(term, **kw)
        values = term.right.element if isinstance(term.right, elements.Grouping) else term.right
        self.partition_key_list = self.compiler.bind_names.get(values)
        self.compiler.record.key_parameters[self.partition_key_list] = ", ".join(
            c.name for c in self.key_list_columns
        )
        return text

    def _partitions_in(self, term: Any, **kw: Any) -> str:
        """``pk = a OR pk = b`` beside a sort-key condition, as ``pk IN [a, b]``: DynamoDB Local
        drops a sort-key condition after such an OR, and keeps it after an IN, which then reads
        each partition once even when a value repeats (docs/partiql-findings.md)."""
        values = []
        for part in term.clauses:
            values.append(self.compiler.process(part.right, **kw))
            self.conditions.record_values(part)
        return f"{self.compiler.process(term.clauses[0].left, **kw)} IN [{', '.join(values)}]"

    def _filter_term(self, term: Any, grouped: bool, table_hash: Any, **kw: Any) -> str:
        text = self.compiler.process(term.self_group(against=operators.and_) if grouped else term, **kw)
        if is_on(term, table_hash, {operators.in_op}):
            # Reading a global index, DynamoDB Local returns each matching item several times
            # for an IN on the table's partition key in the AND chain; below a NOT NOT it
            # returns each once (docs/partiql-findings.md).
            self.conditions.unordered(
                f"IN on the table's partition key {table_hash.name!r} while reading a global index"
            )
            text = f"NOT (NOT ({text}))"
        return text


def _tests_kinds(term: Any, attribute: str) -> bool:
    """Whether ``term`` is ``attribute IN (a list of values)``."""
    if not (isinstance(term, elements.BinaryExpression) and term.operator is operators.in_op):
        return False
    values = term.right.element if isinstance(term.right, elements.Grouping) else term.right
    return (
        isinstance(term.left, elements.ColumnClause)
        and term.left.name == attribute
        and isinstance(values, elements.BindParameter)
    )
