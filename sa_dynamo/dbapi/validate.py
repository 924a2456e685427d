"""Every rule a write is checked against before anything is sent: what DynamoDB would refuse
fails here, with an error that names the rule and what to do instead.

Writes that are not atomic together (an AUTOCOMMIT executemany, a chunked commit) check every
row before the first request, so that a bad row cannot leave the rows before it written. The
rules are DynamoDB's (numbers, nesting, names, keys, item size, as verified on DynamoDB Local,
docs/partiql-findings.md) and those a table declares through ``TableRules``: the attribute
types of its keys and indexes, and the values its columns take (the dialect tells them from
the SQLAlchemy Table; a table described by DescribeTable has key types only).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import TYPE_CHECKING, Any

from .errors import DataError, IntegrityError, ProgrammingError, shown
from .limits import (
    EXPONENTS,
    MAX_DIGITS,
    MAX_ITEM_BYTES,
    MAX_KEY_BYTES,
    MAX_LEVELS,
    MAX_STATEMENT_BYTES,
    NAME_CHARACTERS,
    NAME_LENGTHS,
    UNNAMEABLE_PREFIXES,
)

if TYPE_CHECKING:
    from .writes import Write


KIND_NAMES = {
    "S": "a string",
    "N": "a number",
    "B": "binary",
    "BOOL": "a boolean",
    "NULL": "null",
    "M": "a map (dict)",
    "L": "a list",
    "SS": "a string set",
    "NS": "a number set",
    "BS": "a binary set",
}


@dataclass(frozen=True)
class KeyAttribute:
    """An attribute of the table's key or of an index's key."""

    name: str
    type: str | None  # S, N or B; None when not known
    role: str  # HASH or RANGE
    index: str | None = None  # None: the table's own key


@dataclass(frozen=True)
class AttributeRule:
    """The values a column takes: AttributeValue kinds (None, absent, is always allowed for a
    non-key attribute) and, for a scaled number, PostgreSQL's numeric(precision, scale); for an
    integer, whole numbers only."""

    type_name: str
    kinds: frozenset[str]
    precision: int | None = None
    scale: int | None = None
    whole: bool = False


@dataclass(frozen=True)
class TableRules:
    """What the client knows of a table before writing to it."""

    table: str
    key: tuple[str, ...]  # the table's key attributes, HASH first
    key_attributes: tuple[KeyAttribute, ...] = ()
    attributes: Mapping[str, AttributeRule] = field(default_factory=dict)
    # NOT NULL attributes beyond the key (nullable=False), each with the table its foreign key
    # refers to (None: not a foreign key), for the advice of a refusal
    required: Mapping[str, str | None] = field(default_factory=dict)
    # the columns of each unique constraint (unique=True, UniqueConstraint, a unique Index),
    # kept by guard items (unique.py)
    unique: tuple[tuple[str, ...], ...] = ()
    # attributes whose stored NULL is a value (JSON columns: JSON's null), so only absence is NULL
    null_is_value: frozenset[str] = frozenset()


def rules_from_description(described: dict[str, Any]) -> TableRules:
    """The rules DescribeTable gives: the table's and its indexes' key attributes and types."""
    types = {a["AttributeName"]: a["AttributeType"] for a in described.get("AttributeDefinitions", [])}
    schemas = [(None, described.get("KeySchema", []))] + [
        (index["IndexName"], index["KeySchema"])
        for kind in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes")
        for index in described.get(kind, [])
    ]
    keys = tuple(
        KeyAttribute(k["AttributeName"], types.get(k["AttributeName"]), k["KeyType"], index)
        for index, schema in schemas
        for k in schema
    )
    return TableRules(described.get("TableName", ""), _hash_first(described.get("KeySchema", [])), keys)


def _hash_first(schema: list[dict[str, str]]) -> tuple[str, ...]:
    return tuple(k["AttributeName"] for k in sorted(schema, key=lambda k: k["KeyType"] != "HASH"))


# -- statements and values (every statement, read or write) ------------------------------------


def check_name(kind: str, name: str) -> None:
    """Refuse a table or index name DynamoDB refuses, naming it (DynamoDB's own message does not)."""
    bad = sorted(set(name) - NAME_CHARACTERS)
    if len(name) in NAME_LENGTHS and not bad:
        return
    why = (
        f"it has {len(name)} character{'s' if len(name) != 1 else ''}"
        if len(name) not in NAME_LENGTHS
        else f"it contains {', '.join(map(repr, bad))}"
    )
    rename = "rename it in __tablename__ or Table(...)" if kind == "table" else "give the Index another name"
    raise ProgrammingError(
        f"DynamoDB cannot name a {kind} {name!r}: {why}, and a {kind} name has 3 to 255 characters, "
        f"each a letter, a digit, '_', '-' or '.': {rename}"
    )


def check_statement_size(operation: str) -> None:
    """Refuse a statement text over DynamoDB's 8 KB limit."""
    if len(operation) * 4 <= MAX_STATEMENT_BYTES:
        return  # no character takes more than 4 bytes in UTF-8
    size = len(operation.encode("utf-8"))
    if size > MAX_STATEMENT_BYTES:
        raise ProgrammingError(
            f"statement is {size} bytes; DynamoDB accepts at most {MAX_STATEMENT_BYTES}: "
            "split the work into smaller statements (fewer IN values or conditions)"
        )


def check_number(value: Decimal) -> None:
    """Refuse a number DynamoDB cannot store: NaN, infinity, over 38 digits, out of range."""
    if not value.is_finite():
        raise DataError(f"DynamoDB cannot store {value}: store None (attribute absent) or a finite number")
    if value.is_zero():
        return
    # Counted from the digit tuple: normalize() would round to the context's 28 digits first.
    significant = "".join(map(str, value.as_tuple().digits)).strip("0")
    if len(significant) > MAX_DIGITS:
        raise DataError(
            f"a number with more than {MAX_DIGITS} significant digits ({len(significant)}): DynamoDB "
            f"keeps {MAX_DIGITS} exactly"
        )
    if value.adjusted() not in EXPONENTS:
        raise DataError("a number outside DynamoDB's range (1E-130 to 9.9E+125)")


def number_text(value: Decimal) -> str:
    """DynamoDB's own form of a number: plain notation without insignificant zeros ("1.50" ->
    "1.5", "1E+2" -> "100"). DynamoDB Local stores an UPDATE's SET value verbatim, so the
    driver sends this form itself."""
    if value.is_zero():
        return "0"
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def nesting_error() -> DataError:
    return DataError(
        f"a value nested more than {MAX_LEVELS} levels deep (the attribute, then maps and lists inside "
        f"each other): DynamoDB stores at most {MAX_LEVELS}; flatten the document or store it as a JSON string"
    )


# -- sizes ---------------------------------------------------------------------------------------


def number_size(text: str) -> int:
    """An N value's size as DynamoDB counts it: one byte per pair of digits, the pairs aligned on
    the decimal point, plus one, plus one more when negative (zero: one byte)."""
    negative = text.startswith("-")
    whole, _, fraction = text.lstrip("-").partition(".")
    digits, exponent = whole + fraction, -len(fraction)  # exponent: of the last digit
    if not digits.isdigit():  # not the plain form number_text() gives, e.g. 1E+5
        sign, parts, exponent = Decimal(text).as_tuple()
        negative, digits = bool(sign), "".join(map(str, parts))
    significant = digits.lstrip("0").rstrip("0")
    if not significant:
        return 1
    exponent += len(digits.lstrip("0")) - len(significant)
    return (len(significant) + exponent % 2 + 1) // 2 + 1 + negative


def attribute_size(value: dict[str, Any]) -> int:
    """An AttributeValue's size toward the 400 KB item limit, as DynamoDB counts it. A map with
    an empty key, which DynamoDB refuses ("Empty attribute name"), is refused on the way."""
    ((kind, inner),) = value.items()
    if kind == "S":
        return len(inner.encode("utf-8"))
    if kind == "N":
        return number_size(inner)
    if kind == "B":
        return len(inner)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind in ("SS", "NS", "BS"):
        return sum(attribute_size({kind[0]: v}) for v in inner)
    if kind == "M":
        if "" in inner:
            raise DataError("an empty key in a map: DynamoDB refuses empty attribute names")
        return 3 + sum(len(k.encode("utf-8")) + attribute_size(v) + 1 for k, v in inner.items())
    return 3 + sum(attribute_size(v) + 1 for v in inner)  # L


def _sizes(values: Mapping[str, dict[str, Any]]) -> dict[str, int]:
    return {name: len(name.encode("utf-8")) + attribute_size(value) for name, value in values.items()}


def surely_within_limit(values: Mapping[str, dict[str, Any]]) -> bool:
    """Whether an item of flat attributes (strings, numbers, binaries, booleans, nulls) is within
    the 400 KB limit by a bound on its size that needs no encoding: a character takes at most
    4 bytes in UTF-8, a number at most its text's length plus 2. Most items are such, and far
    below the limit; a set, a map (whose keys are checked) or a list is left to the exact count."""
    bound = 0
    for name, value in values.items():
        ((kind, inner),) = value.items()
        if kind == "S":
            bound += 4 * (len(name) + len(inner))
        elif kind == "N" or kind == "B":
            bound += 4 * len(name) + len(inner) + 2
        elif kind == "BOOL" or kind == "NULL":
            bound += 4 * len(name) + 1
        else:
            return False
    return bound <= MAX_ITEM_BYTES


# -- writes ------------------------------------------------------------------------------------


def check_write(write: Write, rules: TableRules, hidden: bool = False) -> None:
    """Refuse before sending what DynamoDB would refuse of one canonical write, and round a
    scaled number to its column's scale (in place: the request sent holds the same value)."""
    whole_item = write.kind in ("INSERT", "PUT")
    if whole_item:
        missing = [k for k in rules.key if k not in write.values]
        if missing:
            raise DataError(
                f"the item for table {write.table!r} has no {', '.join(map(repr, missing))}: every "
                "item needs its key attributes (a None key value leaves the attribute out). Give "
                "the key a value, or let it be made: a Uuid key with default=uuid.uuid4 (the "
                "cheaper choice: no request), or an Integer primary key alone, which a counter "
                "numbers (autoincrement: one request per block of ids); see docs/types.md"
            )
    _check_names(write, [*write.values, *write.removes])
    for name, value in write.values.items():
        rule = rules.attributes.get(name)
        if rule is not None:
            _check_rule(write, name, value, rule, hidden)
    _check_required(write, rules, hidden)
    given = {**dict(write.key), **write.values}
    for key in rules.key_attributes:
        if key.name in given:
            _check_key(write, key, given[key.name], hidden)
    measured = given if not whole_item else write.values
    if surely_within_limit(measured):
        return
    try:
        sizes = _sizes(measured)
    except DataError as error:
        raise DataError(f"{error} (a write to table {write.table!r})") from None
    total = sum(sizes.values())
    if total > MAX_ITEM_BYTES:
        largest = max(sizes, key=sizes.__getitem__)
        what = "item" if whole_item else "item this UPDATE leaves (at least its key and the values it sets)"
        raise DataError(
            f"the {what} for {write.key_text(hidden)} in table {write.table!r} is {total} bytes, over "
            f"DynamoDB's 400 KB item limit (largest attribute: {shown(largest, False)}, "
            f"{sizes[largest]} bytes): store large values elsewhere (e.g. S3) and keep a reference"
        )


def _check_names(write: Write, names: list[str]) -> None:
    for name in names:
        if name.startswith(UNNAMEABLE_PREFIXES):
            raise DataError(
                f"attribute {shown(name, False)} of table {write.table!r} starts with {name[0]!r}: DynamoDB "
                "stores such an attribute but fails every statement that names it (a SELECT of the "
                "column, a WHERE, an UPDATE), so it is refused; give the column another name (the "
                "Python attribute can keep its own: mapped_column('name', ...))"
            )
    if "" in names:
        raise DataError(
            f"an empty attribute name in a write to table {write.table!r}: DynamoDB refuses empty names"
        )


def _check_required(write: Write, rules: TableRules, hidden: bool) -> None:
    """NOT NULL as SQL enforces it: a write may not leave a nullable=False column without a
    value (an INSERT leaving it out, an UPDATE setting it to None, which REMOVEs it). The
    planner relies on it too: an index whose sort key is such a column holds every item."""
    values = write.values

    def null(name: str) -> bool:
        return "NULL" in values.get(name, {}) and name not in rules.null_is_value

    if write.kind in ("INSERT", "PUT"):
        left = [name for name in rules.required if name not in values or null(name)]
        what = "this INSERT gives it no value (None or left out)"
    elif write.kind == "UPDATE":
        left = [name for name in rules.required if name in write.removes or null(name)]
        what = "this UPDATE sets it to None (which removes the attribute)"
    else:
        return
    if not left:
        return
    name, parent = left[0], rules.required[left[0]]
    advice = "give it a value (or a default=), or declare the column nullable=True (Mapped[... | None])"
    if parent is not None and write.kind == "UPDATE":
        advice = (
            f"it refers to table {parent!r}, and the ORM sets it to None when its parent is deleted or "
            "the row is taken out of the parent's relationship: delete such rows with their parent "
            "(relationship(..., cascade='all, delete-orphan')) or give them another parent first; "
            "or declare the column nullable=True"
        )
    raise IntegrityError(
        f"NOT NULL constraint failed: column {name!r} of table {write.table!r} is nullable=False, and "
        f"{what} for the item {write.key_text(hidden)}: {advice}"
    )


def _check_rule(write: Write, name: str, value: dict[str, Any], rule: AttributeRule, hidden: bool) -> None:
    ((kind, inner),) = value.items()
    if kind == "NULL" or not rule.kinds:
        return
    if kind not in rule.kinds:
        *others, last = [KIND_NAMES[k] for k in sorted(rule.kinds)]
        takes = f"{', '.join(others)} or {last}" if others else last
        raise DataError(
            f"column {name!r} of table {write.table!r} is {rule.type_name}, which takes {takes}; "
            f"got {KIND_NAMES[kind]} ({shown(inner, hidden)}): pass a value of the column's type"
        )
    if kind == "N" and rule.whole and Decimal(inner) != Decimal(inner).to_integral_value():
        raise DataError(
            f"column {name!r} of table {write.table!r} is {rule.type_name}, which takes whole numbers; "
            f"got {shown(Decimal(inner), hidden)}: use Numeric for fractions"
        )
    if kind == "N" and rule.scale is not None:
        value["N"] = _scaled(write, name, Decimal(inner), rule, hidden)


def round_to_scale(number: Decimal, scale: int) -> Decimal:
    """PostgreSQL's numeric(p, s) rounding: half away from zero, to ``scale`` places."""
    return number.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP, context=Context(prec=200))


def _scaled(write: Write, name: str, number: Decimal, rule: AttributeRule, hidden: bool) -> str:
    """PostgreSQL's numeric(p, s): round half away from zero to s places, then refuse a value
    with more than p - s digits before the point (its "numeric field overflow")."""
    scale = rule.scale or 0
    rounded = round_to_scale(number, scale)
    if rule.precision is not None and rounded.copy_abs() >= Decimal(10) ** (rule.precision - scale):
        raise DataError(
            f"numeric field overflow: column {name!r} of table {write.table!r} is {rule.type_name}, so a "
            f"value must round to an absolute value less than 10^{rule.precision - scale}; got "
            f"{shown(number, hidden)}"
        )
    return number_text(rounded)


def _check_key(write: Write, key: KeyAttribute, value: dict[str, Any], hidden: bool) -> None:
    ((kind, inner),) = value.items()
    owner = f"table {write.table!r}" if key.index is None else f"index {key.index!r} of table {write.table!r}"
    if key.type is not None and kind != key.type:
        got = KIND_NAMES[kind] + (f" ({shown(inner, hidden)})" if kind != "NULL" else "")
        raise DataError(
            f"key attribute {key.name!r} of {owner} is {KIND_NAMES[key.type]} attribute ({key.type}); got "
            f"{got}: pass a value of the key's type"
            + (" or None to leave the item out of the index" if key.index else "")
        )
    if kind not in ("S", "B"):
        return
    limit = MAX_KEY_BYTES[key.role]
    if inner and len(inner) * 4 <= limit:
        return  # neither empty nor too long: no character takes more than 4 bytes in UTF-8
    size = len(inner.encode("utf-8")) if kind == "S" else len(inner)
    if size == 0:
        raise DataError(
            f"key attribute {key.name!r} of {owner} is empty; DynamoDB keys need a value"
            + (" (None leaves the item out of the index)" if key.index else "")
        )
    if size > limit:
        part = "partition" if key.role == "HASH" else "sort"
        raise DataError(
            f"key attribute {key.name!r} of {owner} is {size} bytes ({shown(inner, hidden)}); DynamoDB "
            f"allows at most {limit} bytes in a {part} key: use a shorter value (e.g. a hash of it)"
        )
