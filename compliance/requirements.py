"""What DynamoDB, through sa_dynamo, can and cannot do, in the terms of SQLAlchemy's suite.

Every ``closed()`` here is a DynamoDB property or a deliberate refusal of sa_dynamo (design.md),
never a bug being hidden; the docstring of each says why. Features the dialect has are opened.
"""

from __future__ import annotations

from sqlalchemy.testing import exclusions
from sqlalchemy.testing.requirements import SuiteRequirements


class Requirements(SuiteRequirements):
    # -- schema ----------------------------------------------------------------------------

    @property
    def foreign_keys(self):
        """DynamoDB has no foreign keys."""
        return exclusions.closed()

    @property
    def self_referential_foreign_keys(self):
        """No foreign keys."""
        return exclusions.closed()

    @property
    def foreign_key_ddl(self):
        """No foreign keys."""
        return exclusions.closed()

    @property
    def on_update_cascade(self):
        """No foreign keys."""
        return exclusions.closed()

    @property
    def recursive_fk_cascade(self):
        """No foreign keys."""
        return exclusions.closed()

    @property
    def foreign_key_constraint_reflection(self):
        """No foreign keys."""
        return exclusions.closed()

    @property
    def named_constraints(self):
        """The key schema is the only constraint, and it has no name."""
        return exclusions.closed()

    @property
    def implicitly_named_constraints(self):
        """The key schema is the only constraint, and it has no name."""
        return exclusions.closed()

    @property
    def unique_constraint_reflection(self):
        """No unique constraints besides the primary key."""
        return exclusions.closed()

    @property
    def temporary_tables(self):
        """No temporary tables."""
        return exclusions.closed()

    @property
    def temp_table_reflection(self):
        """No temporary tables."""
        return exclusions.closed()

    @property
    def indexes_with_ascdesc(self):
        """A secondary index is a key schema; it has no per-column direction."""
        return exclusions.closed()

    @property
    def reflect_indexes_with_ascdesc(self):
        """A secondary index is a key schema; it has no per-column direction."""
        return exclusions.closed()

    @property
    def symbol_names_w_double_quote(self):
        """Table names are limited to [a-zA-Z0-9_.-]."""
        return exclusions.closed()

    @property
    def autoincrement_insert(self):
        """An Integer key alone is numbered by a counter (dbapi/counters.py)."""
        return exclusions.open()

    @property
    def autoincrement_without_sequence(self):
        """The counter is no Sequence object: an Integer key alone is numbered without one."""
        return exclusions.open()

    @property
    def implements_get_lastrowid(self):
        """No generated keys, so no last row id."""
        return exclusions.closed()

    # -- queries ---------------------------------------------------------------------------

    @property
    def subqueries(self):
        """PartiQL on DynamoDB has no subqueries."""
        return exclusions.closed()

    @property
    def offset(self):
        """No OFFSET: DynamoDB pages by resumable token (sa_dynamo.paginate)."""
        return exclusions.closed()

    @property
    def sql_expression_limit_offset(self):
        """LIMIT is a row count the driver applies; it must be a plain integer."""
        return exclusions.closed()

    @property
    def parens_in_union_contained_select_w_limit_offset(self):
        """No UNION."""
        return exclusions.closed()

    @property
    def parens_in_union_contained_select_wo_limit_offset(self):
        """No UNION."""
        return exclusions.closed()

    @property
    def order_by_col_from_union(self):
        """No UNION."""
        return exclusions.closed()

    @property
    def standalone_binds(self):
        """Every SELECT reads one table; a bound value cannot be a selected column."""
        return exclusions.closed()

    @property
    def group_by_complex_expression(self):
        """No GROUP BY."""
        return exclusions.closed()

    @property
    def nested_aggregates(self):
        """No subqueries; COUNT is the only aggregate."""
        return exclusions.closed()

    @property
    def insert_from_select(self):
        """No INSERT ... SELECT."""
        return exclusions.closed()

    @property
    def update_where_target_in_subquery(self):
        """No subqueries."""
        return exclusions.closed()

    @property
    def selectone(self):
        """No SELECT without a table."""
        return exclusions.closed()

    @property
    def implicit_decimal_binds(self):
        """Needs SELECT of a bound value without a table."""
        return exclusions.closed()

    @property
    def standalone_null_binds_whereclause(self):
        """A condition compares an attribute with a value; a parameter is not an expression."""
        return exclusions.closed()

    @property
    def float_cast(self):
        """No CAST."""
        return exclusions.closed()

    @property
    def binary_literals(self):
        """No CAST."""
        return exclusions.closed()

    @property
    def like_escapes(self):
        """startswith()/contains() with autoescape/escape: sent unescaped to begins_with/contains."""
        return exclusions.open()

    # -- types -----------------------------------------------------------------------------

    @property
    def json_type(self):
        """JSON is a native map/list attribute."""
        return exclusions.open()

    @property
    def precision_numerics_many_significant_digits(self):
        """N holds 38 significant digits."""
        return exclusions.open()

    @property
    def precision_numerics_enotation_small(self):
        """N reaches down to 1E-130."""
        return exclusions.open()

    @property
    def datetime_timezone(self):
        """Aware datetimes are stored as UTC ISO-8601 strings."""
        return exclusions.open()

    @property
    def time_timezone(self):
        """Aware times are stored as ISO-8601 strings."""
        return exclusions.open()

    @property
    def timestamp_microseconds(self):
        """TIMESTAMP is the ISO-8601 string of DateTime, microseconds included."""
        return exclusions.open()

    @property
    def datetime_historic(self):
        """ISO-8601 strings of fixed width hold any year from 1."""
        return exclusions.open()

    @property
    def date_historic(self):
        """ISO-8601 strings of fixed width hold any year from 1."""
        return exclusions.open()

    @property
    def date_coerces_from_datetime(self):
        """The Date type refuses a datetime instead of silently dropping its time."""
        return exclusions.closed()

    # -- transactions ----------------------------------------------------------------------

    @property
    def autocommit(self):
        """isolation_level="AUTOCOMMIT" sends each write at once."""
        return exclusions.open()

    @property
    def isolation_level(self):
        """SERIALIZABLE (buffered writes, one ExecuteTransaction at commit) and AUTOCOMMIT."""
        return exclusions.open()
