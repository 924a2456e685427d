"""An example of examples/ loaded as a module, its tables created and filled with its sample data."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from sqlalchemy.orm import Session

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def loaded_example(name: str, engine: Any) -> Iterator[ModuleType]:
    """examples/<name>.py with its tables and sample, for a module-scoped fixture to yield from;
    the tables and the mappers are gone afterwards (so that the next driver's run maps the
    example again, on the same table)."""
    spec = importlib.util.spec_from_file_location(f"{name}_example", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its annotations are resolved in its own namespace
    spec.loader.exec_module(module)
    module.Base.metadata.create_all(engine)
    with Session(engine) as session:
        module.sample(session)
    yield module
    module.Base.metadata.drop_all(engine)
    module.Base.registry.dispose()
    del sys.modules[spec.name]
