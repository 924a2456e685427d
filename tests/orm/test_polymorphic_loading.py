"""Subclass attributes of single-table inheritance loaded by a second query (selectin_polymorphic)."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, selectin_polymorphic

from .conftest import make_staff


@pytest.fixture(
    scope="module",
    params=[pytest.param(False, id="partition-key"), pytest.param(True, id="partition-and-sort-key")],
)
def staff(request, engine):
    """A plain employee, an engineer and a manager on a fresh table."""
    sort_key = request.param
    models = make_staff(f"staff_{uuid.uuid4().hex[:8]}", sort_key=sort_key)
    models.Base.metadata.create_all(engine)
    keys = [{"pk": "DEPT#1", "sk": f"EMP#{n}"} if sort_key else {"pk": f"EMP#{n}"} for n in (1, 2, 3)]
    with Session(engine) as session:
        session.add_all(
            [
                models.Employee(**keys[0], name="Ann"),
                models.Engineer(**keys[1], name="Bob", language="Python"),
                models.Manager(**keys[2], name="Cy", reports=4),
            ]
        )
        session.commit()
    yield models
    models.Base.metadata.drop_all(engine)
    models.Base.registry.dispose()


def test_selectin_polymorphic_loads_subclass_attributes_without_an_order_by(engine, staff, sent):
    Employee, Engineer, Manager = staff.Employee, staff.Engineer, staff.Manager
    query = (
        select(Employee)
        .options(selectin_polymorphic(Employee, [Engineer, Manager]))
        .execution_options(dynamodb_scan="allow")
    )
    with Session(engine) as session:
        people = sorted(session.scalars(query).all(), key=lambda e: e.name)
        # Read from the instance state: a missing attribute would otherwise load lazily.
        loaded = [(type(p).__name__, p.name, vars(p).get("language"), vars(p).get("reports")) for p in people]
    assert loaded == [
        ("Employee", "Ann", None, None),
        ("Engineer", "Bob", "Python", None),
        ("Manager", "Cy", None, 4),
    ]
    table = Employee.__table__.name
    every_kind = '"kind" IN [?, ?, ?]'
    if Employee.__table__.c.get("sk") is None:
        assert sent == [
            f'SELECT "pk", "kind", "name" FROM "{table}" WHERE {every_kind}',
            f'SELECT "pk", "kind", "language" FROM "{table}" WHERE "pk" IN [?] AND ({every_kind} AND "kind" IN [?])',
            f'SELECT "pk", "kind", "reports" FROM "{table}" WHERE "pk" IN [?] AND ({every_kind} AND "kind" IN [?])',
        ]
    else:  # the subclass loads match (pk, sk) IN [...]: full keys, read as a batch of GetItems
        assert sent == [
            f'SELECT "pk", "sk", "kind", "name" FROM "{table}" WHERE {every_kind}',
            f'SELECT "pk", "sk", "kind", "language" FROM "{table}" WHERE "pk" = ? AND "sk" = ?',
            f'SELECT "pk", "sk", "kind", "reports" FROM "{table}" WHERE "pk" = ? AND "sk" = ?',
        ]
