"""The execution context: what each execution of a compiled statement needs that PartiQL cannot
carry (None as an absent attribute, the row limit, page size, consistent reads) and the scan guard."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

from sqlalchemy.engine import default
from sqlalchemy.exc import ArgumentError
from sqlalchemy.sql.elements import TextClause
from sqlalchemy.sql.selectable import TextualSelect

from .. import caller
from ..dbapi.limits import MAX_PARTITION_KEYS
from ..dbapi.ordering import key_order
from ..dbapi.paging import Discriminator, ItemFilter
from ..exc import ScanNotAllowed, ScanWarning, refuse
from ..plan import EXPLAINED, READS, Plan, scan_message
from ..sqlalchemy_private import expanded_parameters, text_bindparams, unit_of_work_flush
from . import capacity_warning
from .autoincrement import counter_column, next_id, numbered_rows
from .client_side.cursor_setup import batch_note, client_read, skipped_rows
from .client_side.single_read import BatchGet
from .compiler import DMLTemplate, empty_key_prefixes_decided, empty_lists_decided, not_in_as_chain
from .compiler.predicate import Values, values_of
from .options import DISCRIMINATOR, EXPLAIN, MATCHED, PAGE, SCAN_FIX
from .value_checks import check_values

log = logging.getLogger("sa_dynamo")

UNKNOWN_TYPE_POLICIES = ("skip", "raise", "base")
SCAN_POLICIES = ("allow", "warn", "error")


def _sql_text_of(statement: Any) -> tuple[TextClause | None, dict[str, Any]]:
    """The SQL text a statement is made of (text(), or text().columns() with its result types)."""
    if isinstance(statement, TextClause):
        return statement, {}
    if isinstance(statement, TextualSelect):
        return statement.element, {c.name: c.type for c in statement.column_args}
    return None, {}


def row_shape(template: Any, params: Any) -> tuple[tuple[Any, frozenset[int]], Any]:
    """A row's group: (the template with its attribute bag expanded, or None without a bag; the
    entries it leaves absent), and its values for that template."""
    shaped, values = template.with_bag(params) if template.bag is not None else (None, params)
    return (shaped, (shaped or template).absent_entries(values)), values


def _without(params: Any, absent: frozenset[int]) -> list[Any]:
    return [v for i, v in enumerate(params) if i not in absent]


# A streamed read asks for this many batches per request, and never fewer items than the floor:
# each request costs a round trip, so one per batch (or per row, for yield_per(1)) is slow.
STREAM_BATCHES_PER_PAGE = 10
MIN_STREAM_PAGE = 1000


def _stream_page_size(options: Any) -> int | None:
    """Items per request for a result consumed in batches (``yield_per``, ``stream_results``,
    ``max_row_buffer``): a few batches, so that the driver never holds a whole 1 MB page
    (tens of thousands of small items) for a consumer that takes a thousand rows at a time. It
    only sets DynamoDB's Limit, the items evaluated per request; the rows returned are the same."""
    size = options.get("yield_per") or options.get("max_row_buffer")
    if not size and options.get("stream_results"):
        size = 1000  # SQLAlchemy's default max_row_buffer
    return max(int(size) * STREAM_BATCHES_PER_PAGE, MIN_STREAM_PAGE) if size else None


class DynamoDBExecutionContext(default.DefaultExecutionContext):
    """Applies per-execution facts the compiled PartiQL cannot carry: None -> absent attribute,
    the row limit, page size and consistent reads."""

    control_plane_request: tuple[str, dict[str, Any]] | None = None
    row_groups: list[tuple[str, list]] | None = None
    matches_nothing = False
    text_results: Any = None  # SQL text's: the attributes its result columns hold (ResultAttributes)

    @classmethod
    def _init_compiled(
        cls,
        dialect: Any,
        connection: Any,
        dbapi_connection: Any,
        execution_options: Any,
        compiled: Any,
        parameters: Any,
        invoked_statement: Any,
        extracted_parameters: Any,
        *args: Any,
        **kw: Any,
    ) -> Any:
        """text() and text().columns(): the SQL becomes a Core statement, compiled by the one
        compiler, and executes as that statement (what echo and the events show)."""
        text, result_types = _sql_text_of(compiled.statement)
        results = None
        if text is not None:
            binds = text_bindparams(text)
            translated = dialect.translate_text(connection, text.text, binds, result_types)
            defaults = {
                name: bind.effective_value
                for name, bind in binds.items()
                if bind.value is not None or bind.callable is not None
            }
            compiled, invoked_statement = translated.compiled, translated.statement
            results = translated.results
            parameters = translated.parameters(parameters, defaults)
            extracted_parameters = None
            kw.pop("param_dict", None)  # the text's own parameters, already in ``parameters``
        numbered = numbered_rows(dialect, dbapi_connection, compiled, invoked_statement, parameters)
        if numbered is not None:
            numbered_compiled, parameters = numbered
            if numbered_compiled is not compiled:  # the statement's own values are in it
                compiled, extracted_parameters = numbered_compiled, None
        if compiled.literal_execute_params and len(parameters) > 1:
            # A JSON path's steps are written into the text per execution (DynamoDB takes no
            # parameter inside a path), which SQLAlchemy cannot do for an executemany.
            refuse(
                "a JSON path in an executemany",
                "execute the statement once for each row, or leave the path's test out of it",
            )
        context = super()._init_compiled(
            dialect,
            connection,
            dbapi_connection,
            execution_options,
            compiled,
            parameters,
            invoked_statement,
            extracted_parameters,
            *args,
            **kw,
        )
        context.text_results = results
        return context

    @classmethod
    def _init_statement(
        cls,
        dialect: Any,
        connection: Any,
        dbapi_connection: Any,
        execution_options: Any,
        statement: str,
        parameters: Any,
    ) -> Any:
        """exec_driver_sql (and pandas.read_sql of a string): the same translation as text(),
        with ``?`` parameters."""
        translated = dialect.translate_text(connection, statement)
        context = cls._init_compiled(
            dialect,
            connection,
            dbapi_connection,
            execution_options,
            translated.compiled,
            translated.parameters(parameters, {}),
            translated.statement,
            None,
        )
        context.text_results = translated.results
        return context

    def get_result_processor(self, type_: Any, colname: str, coltype: Any) -> Any:
        """SQL text's result columns are untyped; one that holds an attribute of a table this
        engine declared or reflected comes back as that column's type gives it (an Integer as
        int, a DateTime as datetime), as from the Table's own select()."""
        if self.text_results is not None and type_._isnull:
            known = self.dialect.result_type(self.text_results, colname)
            if known is not None:
                type_ = known
        return super().get_result_processor(type_, colname, coltype)

    def pre_exec(self) -> None:
        compiled = self.compiled
        if self.isddl:
            self._pre_exec_ddl(compiled)
            return
        template = compiled.record.template
        if template is not None and (expanded_parameters(self) or compiled.literal_execute_params):
            # its WHERE with the IN lists expanded and the JSON paths' steps written in
            template = template.finalized(self.statement)
        self._apply_template(template)
        if compiled.record.not_in_chain:
            self.statement = not_in_as_chain(self.statement)
        if not all(expanded_parameters(self).values()):
            self.statement = empty_lists_decided(self.statement)
        if compiled.record.key_prefixes and not self.executemany:
            attributes = frozenset(compiled.record.key_prefixes.values())
            self.statement = empty_key_prefixes_decided(self.statement, attributes, self.parameters[0])
        self.matches_nothing = check_values(self, compiled)
        self._partitions_in_key_order(compiled)
        batch = self._batch_read(compiled)
        self._configure_cursor(compiled)
        self.cursor.client_read = client_read(self, compiled, batch)
        self.cursor.skip_rows = skipped_rows(self, compiled)
        if self.cursor.client_read is not None:
            self.cursor.hidden_columns = 0  # the client read drops them after sorting
        plan = compiled.record.plan if batch is None else batch.plan
        if plan is not None:
            finished = batch_note(self._finished_plan(compiled, plan), batch, len(self.parameters[0]))
            self._guard(finished.nothing_sent() if self.matches_nothing else finished)
            if compiled.record.count is None:  # a COUNT reads what it counts: nothing dropped
                self._watch_capacity(finished, compiled.record.driver_filter)

    def _partitions_in_key_order(self, compiled: Any) -> None:
        """An IN list of partition keys sent in DynamoDB's order of keys (ordering.key_order), so
        that a read over several pages reads each partition once; before echo shows it."""
        listed = compiled.record.partitions_in
        if listed is None or len(self.parameters) != 1:
            return
        count = listed if isinstance(listed, int) else len(expanded_parameters(self).get(listed, ()))
        if count > 1:
            parameters = list(self.parameters[0])
            parameters[:count] = key_order(parameters[:count])  # key conditions come first
            self.parameters = [parameters]

    def _batch_read(self, compiled: Any) -> BatchGet | None:
        """A key list read as a batch of single-item SELECTs (always for tuple_(...).in_(), for
        a partition-key IN beyond 50 keys): the statement and its parameters, the keys, set."""
        batch = compiled.record.batch_get
        if batch is None:
            return None
        values = len(expanded_parameters(self).get(batch.keys, ()))
        if not batch.always and values <= MAX_PARTITION_KEYS:
            return None
        self.statement = batch.statement
        self.parameters = [list(self.parameters[0][:values])]  # key conditions come first
        return batch

    def _finished_plan(self, compiled: Any, plan: Plan) -> Plan:
        """The plan with the PartiQL as sent. Without parameters expanded at execution time it is
        the same for every execution of the same text, so the compiled statement keeps it."""
        if expanded_parameters(self) or compiled.record.driver_filter is not None:
            # (the driver filter's IN list is not sent, so SQLAlchemy does not expand it)
            return plan.finished(self.statement, self._rendered_at_execution)
        kept = compiled.record.finished_plan
        if kept is not None and kept[0] is plan and kept[1] == self.statement:
            return kept[2]
        finished = plan.finished(self.statement, self._rendered_at_execution)
        compiled.record.finished_plan = (plan, self.statement, finished)
        return finished

    def _rendered_at_execution(self, name: str) -> str:
        """How a parameter rendered at execution time appears in the plan: an expanded list as
        its placeholders, a literal (a JSON path step) as ``?`` (the PartiQL shows its value); a
        list the driver tests instead of sending it (Plan.driver_filter) as one ``?`` per value."""
        expanded = expanded_parameters(self).get(name)
        if expanded is None:
            value = self.compiled_parameters[0].get(name)
            expanded = value if isinstance(value, (list, tuple)) else [name]
        return ", ".join("?" * len(expanded))

    def _guard(self, plan: Plan) -> None:
        """Log the plan; hold back a scan the policy forbids; hand the plan to explain().

        A scan the policy lets through is one ScanWarning at the user's line. It is not also
        logged as a warning: the sa_dynamo logger has no handler by default, so Python would
        print that record to stderr too, the same news twice. The INFO line of the plan (every
        statement's) is there for those who route logs."""
        explain = self.execution_options.get(EXPLAIN)
        if explain is not None:
            explain["plan"] = plan
            if log.isEnabledFor(logging.INFO):
                log.info("%s: %s", EXPLAINED, plan.summary())
            return
        if log.isEnabledFor(logging.INFO):
            log.info(plan.summary())
        if plan.operation != "Scan" or self.matches_nothing:  # nothing is read
            return
        policy = self._scan_policy()
        if policy not in SCAN_POLICIES:
            raise ArgumentError(f"dynamodb_scan must be one of {', '.join(SCAN_POLICIES)}, not {policy!r}")
        if policy == "allow":
            return
        message = scan_message(plan, self.execution_options.get(SCAN_FIX, ""))
        if policy == "error":
            raise ScanNotAllowed(message)
        caller.warn(message, ScanWarning)

    def _watch_capacity(self, plan: Plan, driver_filter: tuple[Any, str] | None) -> None:
        """A read warns when it hands out far fewer rows than DynamoDB returned (capacity_warning.py)."""
        options = self.options_in_force
        threshold = capacity_warning.ratio(
            options.get(capacity_warning.OPTION, self.dialect.dynamodb_capacity_warning)
        )
        if threshold is None or plan.operation not in READS or EXPLAIN in options or self.matches_nothing:
            return
        discriminator = options.get(DISCRIMINATOR)
        attribute = driver_filter[1] if driver_filter is not None else discriminator and discriminator[0]
        capacity_warning.watch(self.cursor, plan, threshold, attribute, self.dialect.hide_parameters)

    def _scan_policy(self) -> str:
        return self.options_in_force.get("dynamodb_scan", self.dialect.dynamodb_scan)

    @cached_property
    def options_in_force(self) -> Mapping[str, Any]:
        """The execution options, the statement's own ``dynamodb_*`` ones on top: the most
        specific wins, a statement's own, then the connection's (or the ``execute()`` call's),
        then the engine's. SQLAlchemy lets a connection's option override a statement's, so a
        connection-wide setting would silently undo what the statement itself asked for. Made
        once per execution: the scan guard, the cursor and the client-side read all read it."""
        statement = getattr(self, "invoked_statement", None)
        own = statement.get_execution_options() if statement is not None else None
        if not own:
            return self.execution_options
        mine = {name: value for name, value in own.items() if name.startswith("dynamodb_")}
        return {**self.execution_options, **mine} if mine else self.execution_options

    def _apply_template(self, template: DMLTemplate | None) -> None:
        """None means attribute absent: leave it out of an INSERT, REMOVE it in an UPDATE. An
        attribute bag's value becomes the attributes it writes (DMLTemplate.with_bag)."""
        if template is not None:
            if template.bag is not None and not unit_of_work_flush(self.execution_options):
                # (the ORM's flush checked its objects' bags against their classes' columns)
                for params in self.parameters:
                    template.refuse_bag_clashes(params)
            groups: dict[tuple, list] = defaultdict(list)
            for params in self.parameters:
                key, values = row_shape(template, params)
                groups[key].append(values)
            if len(groups) > 1:
                self.row_groups = [
                    ((shaped or template).render(a), [_without(p, a) for p in rows])
                    for (shaped, a), rows in groups.items()
                ]
            elif (shaped_absent := next(iter(groups)))[0] is not None or shaped_absent[1]:
                # Rewritten here, before the statement is logged, so echo shows what is sent.
                shaped, absent = shaped_absent
                self.statement = (shaped or template).render(absent)
                self.parameters = [_without(params, absent) for params in groups[shaped_absent]]

    def _configure_cursor(self, compiled: Any) -> None:
        cursor = self.cursor
        options = self.options_in_force
        cursor.page_size = options.get("dynamodb_page_size")
        if cursor.page_size is None:  # an explicit dynamodb_page_size wins
            cursor.page_size = _stream_page_size(options)
        cursor.consistent_read = bool(options.get("dynamodb_consistent_read", False))
        if cursor.consistent_read and compiled.record.global_index:
            raise ArgumentError(
                "dynamodb_consistent_read is not available on a global secondary index (DynamoDB "
                "replicates GSIs asynchronously): read from the table or a local index instead"
            )
        cursor.count_only = compiled.record.count_only
        if compiled.record.predicate is not None:
            if not (compiled.isupdate or compiled.isdelete):
                # In a transaction the items it wrote are tested and laid over what is read.
                cursor.read_matches = self._item_test(compiled)
            elif not unit_of_work_flush(options):
                # In a transaction each row's item is read and tested first: the rowcount is exact
                # at once. The ORM's own flush of loaded objects keeps one call per commit and reads
                # only the items it checks the version of.
                rows = range(len(self.compiled_parameters))
                cursor.write_matches = [self._item_test(compiled, row) for row in rows]
                cursor.matched_by_read = bool(options.get(MATCHED))
            elif not cursor.connection.autocommit:
                # Its versioned writes, announced before it (orm/version_checks.py), are tested
                # on their items, all read by the first: StaleDataError comes at the flush.
                rows = range(len(self.compiled_parameters))
                cursor.write_matches = [self._item_test(compiled, row) for row in rows]
                cursor.announced_only = True
        driver_filter = compiled.record.driver_filter
        cursor.item_filter = None
        if driver_filter is not None:
            test, attribute = driver_filter
            cursor.item_filter = ItemFilter((attribute,), self._item_test(compiled, predicate=test))
        cursor.count = compiled.record.count
        cursor.hidden_columns = compiled.record.hidden_columns
        cursor.star_columns = compiled.record.star_columns
        star = compiled.record.star_table
        cursor.star_order = self.dialect.star_order(star) if star is not None else ()
        if compiled.record.key_names is not None:
            cursor.connection.tables.set_key_names(*compiled.record.key_names)
        discriminator = options.get(DISCRIMINATOR)
        if discriminator is not None:
            policy = options.get("dynamodb_unknown_type", "skip")
            if policy not in UNKNOWN_TYPE_POLICIES:
                raise ArgumentError(
                    f"dynamodb_unknown_type must be one of {', '.join(UNKNOWN_TYPE_POLICIES)}, not {policy!r}"
                )
            attribute, known, base, mapped = discriminator
            cursor.discriminator = Discriminator(attribute, known, policy, base, mapped)
        limit = None
        if compiled.record.limit_bind is not None:
            cursor.max_rows = limit = int(self.compiled_parameters[0][compiled.record.limit_bind])
        page = options.get(PAGE)
        if page is not None:
            cursor.start_token = page.start(self.statement, self.parameters, limit, cursor)
            cursor.page_rows = page.rows

    def _item_test(self, compiled: Any, row: int = 0, predicate: Any = None) -> Callable[[dict], bool]:
        """The statement's WHERE (or ``predicate``, some of its tests; with the parameters of
        ``row``, for an executemany) as a test of one item; the parameters' values are worked
        out when it is first used (most reads have no transaction's writes to test). It holds
        no reference to the context: the cursor holds the test and the context the cursor, and
        that cycle would leave every read's context to the garbage collector."""
        predicate = predicate or compiled.record.predicate
        parameters, expanded = self.compiled_parameters[row], expanded_parameters(self)
        values: Values | None = None

        def matches(item: dict) -> bool:
            nonlocal values
            if values is None:
                values = values_of(compiled, parameters, expanded)
            return predicate(item, values)

        return matches

    def get_insert_default(self, column: Any) -> Any:
        """An autoincrement key column's value from its counter (dbapi/counters.py), as
        PostgreSQL's dialect takes a SERIAL column's from its sequence before the INSERT."""
        if column is counter_column(column.table):
            return next_id(self.dialect, self.cursor.connection, column)
        return super().get_insert_default(column)

    def _pre_exec_ddl(self, compiled: Any) -> None:
        self.control_plane_request = compiled.control_plane_request
        if self.control_plane_request is None:
            return
        method, request = self.control_plane_request
        # create_all() creates a table's indexes right after the table, which CreateTable already
        # made: those CreateIndex statements send nothing. Any other DDL ends that window.
        info = self.root_connection.info
        created = info.pop("sa_dynamo_indexes_created_with_table", set())
        if method == "create_table":
            info["sa_dynamo_indexes_created_with_table"] = {
                (request["TableName"], i["IndexName"])
                for key in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes")
                for i in request.get(key, [])
            }
        elif method == "create_index":
            table = request["TableName"]
            index = request["GlobalSecondaryIndexUpdates"][0]["Create"]["IndexName"]
            if (table, index) in created:
                created.discard((table, index))
                info["sa_dynamo_indexes_created_with_table"] = created
                self.control_plane_request = None
                self.statement = f"-- index {index} was created with table {table}"
