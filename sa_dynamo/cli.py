"""The ``sa-dynamo`` command.

Each subcommand is an ``_add_*`` function that registers its parser and sets ``run``, the
function that carries it out and returns the exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from . import local


def _local_install(args: argparse.Namespace) -> int:
    print(local.install())
    return 0


def _local_start(args: argparse.Namespace) -> int:
    server = local.start_detached(port=args.port, data_dir=args.data_dir)
    _print_server(server)
    return 0


def _local_stop(args: argparse.Namespace) -> int:
    print("stopped" if local.stop_detached() else "not running")
    return 0


def _local_status(args: argparse.Namespace) -> int:
    server = local.status()
    if server is None:
        print("not running")
        return 1
    _print_server(server)
    return 0


def _print_server(server: local.LocalDynamoDB) -> None:
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
    actions.add_parser("install", help="fetch DynamoDB Local once and print its directory").set_defaults(
        run=_local_install
    )
    start = actions.add_parser("start", help="start it in the background and print its URLs")
    start.add_argument("--port", type=int, help="TCP port on 127.0.0.1 (default: a free one)")
    start.add_argument(
        "--data-dir", type=Path, metavar="PATH", help="keep the tables in PATH (default: in memory)"
    )
    start.set_defaults(run=_local_start)
    actions.add_parser("stop", help="stop the server `local start` started").set_defaults(run=_local_stop)
    actions.add_parser("status", help="exit code 0 if it is running, 1 if not").set_defaults(
        run=_local_status
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sa-dynamo", description="Tools for the sa_dynamo dialect.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_local(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; expected failures are one line on stderr and exit code 2."""
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except local.LocalError as exc:
        print(f"sa-dynamo: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
