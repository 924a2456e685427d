"""The ``sa-dynamo`` command.

Each subcommand is an ``_add_*`` function that registers its parser and sets ``run``, the
function that carries it out and returns the exit code.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, Table, create_engine, make_url, text
from sqlalchemy import exc as sa_exc

from . import __version__, check, dbapi, local_server, sql_text
from .plan import explain


def _local_install(args: argparse.Namespace) -> int:
    home = local_server.install()
    local_server.launcher(home)  # compiled now, so a runtime without a Java compiler can start it later
    print(home)
    return 0


def _local_start(args: argparse.Namespace) -> int:
    server = local_server.start_detached(port=args.port, data_dir=args.data_dir)
    _print_server(server)
    return 0


def _local_stop(args: argparse.Namespace) -> int:
    print("stopped" if local_server.stop_detached() else "not running")
    return 0


def _local_status(args: argparse.Namespace) -> int:
    server = local_server.status()
    if server is None:
        print("not running")
        return 1
    _print_server(server)
    return 0


def _print_server(server: local_server.LocalDynamoDB) -> None:
    print(server)
    print(f"endpoint URL:   {server.endpoint_url}")
    print(f"SQLAlchemy URL: {server.sqlalchemy_url}")


def _add_local(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "local",
        help="manage a DynamoDB Local on 127.0.0.1",
        description="Install, start and stop a DynamoDB Local that outlives this command.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser(
        "install", help="fetch DynamoDB Local and compile its launcher, once; print its directory"
    ).set_defaults(run=_local_install)
    start = actions.add_parser("start", help="start it in the background and print its URLs")
    start.add_argument(
        "--port",
        type=int,
        help=f"TCP port on 127.0.0.1 (default: {local_server.DEFAULT_PORT}, as dynamodb://127.0.0.1 "
        "expects; 0: a free one)",
    )
    start.add_argument(
        "--data-dir", type=Path, metavar="PATH", help="keep the tables in PATH (default: in memory)"
    )
    start.set_defaults(run=_local_start)
    actions.add_parser("stop", help="stop the server `local start` started").set_defaults(run=_local_stop)
    actions.add_parser("status", help="exit code 0 if it is running, 1 if not").set_defaults(
        run=_local_status
    )


class _UsageError(Exception):
    """Why ``check`` cannot run: one line on stderr, exit code 2."""


def _load(target: str) -> Any:
    """The object ``MODULE:NAME`` names; the current directory is importable, as with ``python -m``."""
    module_name, _, name = target.partition(":")
    if not module_name or not name:
        raise _UsageError(f"expected MODULE:NAME (e.g. myapp.models:Base), not {target!r}")
    directory = os.getcwd()
    sys.path.insert(0, directory)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise _UsageError(
            f"cannot import {module_name!r} ({exc}): run from the directory that contains it or add "
            "that directory to PYTHONPATH"
        ) from exc
    finally:
        sys.path.remove(directory)
    try:
        return getattr(module, name)
    except AttributeError:
        raise _UsageError(f"module {module_name!r} has no attribute {name!r}") from None


def _engine(url: str) -> Engine:
    """The engine of ``url``. No message here repeats the URL: it may hold a secret access key."""
    try:
        parsed = make_url(url)
    except (sa_exc.ArgumentError, ValueError):
        # SQLAlchemy's own message quotes the part it could not read, which may be the secret.
        raise _UsageError(
            "the database URL cannot be read: write dynamodb://HOST:PORT, dynamodb://?PARAMETER=VALUE "
            "or dynamodb://ACCESS_KEY_ID:SECRET_ACCESS_KEY@HOST:PORT with the secret URL-encoded"
        ) from None
    try:
        return create_engine(parsed)
    except (sa_exc.ArgumentError, ValueError) as exc:
        raise _UsageError(f"the database URL: {exc}") from exc


def _check(args: argparse.Namespace) -> int:
    try:
        models = _load(args.models)
        engine = _engine(args.url)
        try:
            differences = check.check(models, engine)
        except sa_exc.DBAPIError as exc:
            shown = engine.url.render_as_string(hide_password=True)
            raise _UsageError(f"cannot read the tables at {shown}: {exc.orig}") from exc
        finally:
            engine.dispose()
    except (_UsageError, sa_exc.SQLAlchemyError) as exc:
        message = str(exc)
    else:
        for difference in differences:
            print(difference)
        print(check.summary(differences))
        return 1 if differences else 0
    print(f"sa-dynamo: {message}", file=sys.stderr)
    return 2


def _add_check(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "check",
        help="compare the models with the live tables",
        description="Report every difference between the models and the DynamoDB tables: key "
        "schema, indexes, projections, a missing table, an index that does not project the "
        "discriminator, a relationship whose loads scan (its foreign key has no index). Exit code "
        "0: they match; 1: differences; 2: the check could not run.",
    )
    parser.add_argument(
        "models", metavar="MODULE:NAME", help="a declarative base (or MetaData), e.g. myapp.models:Base"
    )
    parser.add_argument("--url", required=True, help="the database, e.g. dynamodb:// or dynamodb://HOST:PORT")
    parser.set_defaults(run=_check)


# Explaining against the models sends nothing; the engine still needs an endpoint, and this one
# (a closed loopback port) refuses a request sent by mistake instead of letting it reach AWS.
_NOWHERE = "dynamodb://127.0.0.1:9"


def _explain(args: argparse.Namespace) -> int:
    try:
        if (args.url is None) == (args.models is None):
            raise _UsageError(
                "give the database URL (the tables are read from DynamoDB) or --models MODULE:NAME "
                "(the tables are the models', nothing is read), not both"
                if args.url
                else "give the database URL, or --models MODULE:NAME to explain against the models"
            )
        engine = _engine(args.url or _NOWHERE)
        try:
            statement, columns = (
                (text(args.sql), []) if args.models is None else _against_models(args, engine)
            )
            plan = explain(engine, statement).with_discriminator(columns)
        finally:
            engine.dispose()
    except (_UsageError, sa_exc.SQLAlchemyError, dbapi.Error) as exc:
        # the driver's own words, without SQLAlchemy's statement and background link
        print(f"sa-dynamo: {exc.orig if isinstance(exc, sa_exc.DBAPIError) else exc}", file=sys.stderr)
        return 2
    print(plan)
    return 0


def _against_models(args: argparse.Namespace, engine: Engine) -> tuple[Any, list[Any]]:
    """The SQL text as the Core statement it means against the models' tables (with its literal
    values bound), translated as the dialect translates text against the live tables; and the
    models' discriminator columns, which the plan names where its filter tests one."""
    metadata, mappers = check.read_models(_load(args.models))

    def table(name: str) -> Table:
        if name not in metadata.tables:
            raise _UsageError(
                f"table {name!r} is not in the models of {args.models}: check the name (table names "
                "are case-sensitive), or import the module that defines it"
            )
        return metadata.tables[name]

    translator = sql_text.Translator(lambda statement: statement.compile(dialect=engine.dialect))
    translated = translator.translate(args.sql, table)
    columns = [m.polymorphic_on for m in mappers if m.inherits is None and m.polymorphic_on is not None]
    return translated.statement.params(translated.parameters([{}], {})[0]), columns


def _add_explain(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "explain",
        help="show the PartiQL and the access path of a SQL statement, without running it",
        description="Rewrite SQL text (or PartiQL) as sa_dynamo would and print its plan: "
        "GetItem, Query or Scan, table, index, key condition, filter and the PartiQL. The tables' "
        "key schemas and indexes are read from DynamoDB at URL, or with --models taken from the "
        "models, and then nothing is read from DynamoDB at all.",
    )
    parser.add_argument("url", nargs="?", help="the database, e.g. dynamodb:// or dynamodb://HOST:PORT")
    parser.add_argument("sql", help="the statement, e.g. \"SELECT * FROM app WHERE pk = 'A'\"")
    parser.add_argument(
        "--models",
        metavar="MODULE:NAME",
        help="explain against these models (a declarative base or MetaData, e.g. myapp.models:Base) "
        "instead of the live tables",
    )
    parser.set_defaults(run=_explain)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sa-dynamo", description="Tools for the sa_dynamo dialect.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_local(commands)
    _add_check(commands)
    _add_explain(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; expected failures are one line on stderr and exit code 2."""
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except local_server.LocalError as exc:
        print(f"sa-dynamo: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
