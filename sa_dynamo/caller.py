"""Warnings that point at the user's line.

A warning raised deep in an execution (the scan guard runs a dozen frames below
``session.execute()``) would otherwise name a file of SQLAlchemy or sa_dynamo, which tells the
user nothing about which of their statements it is about.
"""

from __future__ import annotations

import os
import sys
import warnings

import sqlalchemy

_LIBRARIES = tuple(
    os.path.dirname(os.path.abspath(path)) + os.sep for path in (sqlalchemy.__file__, __file__)
)


def _in_library(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_LIBRARIES)


def warn(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` at the first frame outside SQLAlchemy and sa_dynamo: the user's code."""
    frame = sys._getframe(1)
    level = 2  # 1 is this function, 2 its caller
    while frame.f_back is not None and _in_library(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
