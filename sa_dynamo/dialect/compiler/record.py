"""What a compiled statement tells its execution beyond its PartiQL: ``compiled.record``.

The compiler fills it while it renders; the execution context reads it to check values,
finish the text and set up the driver's cursor. Kept apart from the compiler's own attributes
(and from the user's ``dynamodb_*`` options) so that a reader sees at once what crosses over.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.sql.schema import Table

from ...plan import Plan


@dataclass
class Record:
    plan: Plan | None = None  # the access path, explain()'s and the scan guard's
    template: Any = None  # an INSERT/UPDATE's DMLTemplate: absent attributes left out per row
    limit_bind: str | None = None  # the LIMIT's parameter: the driver stops after that many rows
    offset_bind: str | None = None  # the OFFSET's parameter: the driver skips that many rows
    bounded: bool = False  # the rows are bounded by the keys the WHERE names (no cap needed)
    count: str | None = None  # "rows" for COUNT(*), "values"/"present" for COUNT(attribute)
    count_only: bool = False  # a RETURNING write that returns its rowcount only
    global_index: bool = False  # a global index is read (no consistent reads there)
    hidden_columns: int = 0  # projected only for DynamoDB's sake, not returned
    star_columns: tuple[tuple[str, ...], str] | None = None  # SELECT *'s columns, and the bag's
    star_table: Table | None = None  # the table of a SELECT *, whose columns come first
    key_names: tuple[str, tuple[str, ...]] | None = None  # a write's table and key
    key_between: tuple[str, str] | None = None  # a sort-key BETWEEN's bound parameters
    always_empty: bool = False  # the WHERE folded to FALSE: no row can match
    not_in_chain: bool = False  # NOT IN must become a chain of <> at execution
    finished_plan: tuple | None = None  # (plan, statement, finished plan), per execution text
    predicate: Any = None  # the WHERE as a Python test of an item (predicate.py)
    # the tests of the discriminator taken out of the PartiQL: (their predicate, the attribute),
    # applied by the driver to the items read (constructs.kinds_after_reading)
    driver_filter: tuple[Any, str] | None = None
    # a write's further tests of its key attributes, decided on the key's values at execution:
    # (their predicate, key attribute -> the bind parameter its == compares with)
    key_retests: tuple[Any, dict[str, Any]] | None = None
    # an IN of partition keys in the key condition: its expanding parameter's name, or how many
    # parameters it has (an OR of partition keys sent as IN); the execution sends them in key order
    partitions_in: str | int | None = None
    batch_get: Any = None  # full keys read as a batch (client_side/single_read.BatchGet)
    client_order: Any = None  # an ORDER BY the driver applies (client_side/single_read.ClientOrder)
    # str(compiled) of a read the driver finishes, SQL text that gives its rows (compiled.string
    # is what is sent): (the select list sent, the one returned, the ORDER BY/LIMIT/OFFSET after)
    replay: tuple[str, str, str] | None = None
    # a statement computed on the client over statements it sends (client_side/): run(context, cursor)
    program: Any = None
    # parameter name -> the key attribute it is compared with (checked for empty values)
    key_parameters: dict[str, str] = field(default_factory=dict)
    # parameter name -> "startswith"/"contains": the method whose value may not hold % or _
    like_parameters: dict[str, str] = field(default_factory=dict)
    # parameter name -> the escape character of a LIKE pattern, which must be 'prefix%'
    like_patterns: dict[str, str | None] = field(default_factory=dict)
    # parameter name -> whether the test comparing an attribute with it is a top-level AND term
    # of the WHERE: a None there (in an IN list: see never_true) makes the test never TRUE, which
    # answers no rows as a top-level term and is refused below an OR
    value_parameters: dict[str, bool] = field(default_factory=dict)
    # parameter name -> the key attribute (quoted) a begins_with() tests: with an empty prefix it
    # is TRUE for every item (templates.empty_key_prefixes_decided), not a refused empty key
    key_prefixes: dict[str, str] = field(default_factory=dict)
    # parameter name -> the attribute of a NOT IN read from a sparse index by its key: with an
    # empty list the test holds for the items the index lacks too, so the execution refuses it
    sparse_not_in: dict[str, str] = field(default_factory=dict)
