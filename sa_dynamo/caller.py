"""Warnings that point at the user's line.

A warning raised deep in an execution (the scan guard runs a dozen frames below
``session.execute()``) would otherwise name a file of SQLAlchemy or sa_dynamo, which tells the
user nothing about which of their statements it is about.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import warnings

# The libraries that run the user's statements for them: a warning skips their frames too.
_RUNNERS = ("sqlalchemy", "sqlmodel", "flask_sqlalchemy", "pandas")


@functools.cache
def _libraries() -> tuple[str, ...]:
    """The directories of sa_dynamo and of those of ``_RUNNERS`` installed (found, not imported)."""
    found = [os.path.dirname(os.path.abspath(__file__))]
    for name in _RUNNERS:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            found += spec.submodule_search_locations
    return tuple(os.path.abspath(directory) + os.sep for directory in found)


def _in_library(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_libraries())


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` at the first frame outside sa_dynamo and the libraries that run
    statements for the user (SQLAlchemy, SQLModel, Flask-SQLAlchemy, pandas): the user's code."""
    frame = sys._getframe(1)
    level = 2  # 1 is this function, 2 its caller
    while frame.f_back is not None and _in_library(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
