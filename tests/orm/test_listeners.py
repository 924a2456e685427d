"""What sa_dynamo registers with SQLAlchemy is registered in one place (orm/listeners.py), once,
and runs in the order written there."""

from __future__ import annotations

from sqlalchemy import Engine, event
from sqlalchemy.orm import Mapper, Session

from sa_dynamo.orm import listeners


def _registered(target: type, name: str) -> list:
    # SQLAlchemy has no public listing of a class's listeners in order; a test may read it.
    return list(getattr(target.dispatch, name)._clslevel[target])


def test_orm_execution_listeners_run_in_the_documented_order():
    ours = [listener for listener, _ in listeners.ORM_EXECUTE]
    assert [fn for fn in _registered(Session, "do_orm_execute") if fn in ours] == ours


# the Mapper events that are the mapper's own (init, load and refresh are its instances')
MAPPER_EVENTS = sorted({name for name, _, _ in listeners.MAPPER} - {"init", "load", "refresh"})


def test_registering_again_adds_nothing():
    before = {name: len(_registered(Mapper, name)) for name in MAPPER_EVENTS}
    executing = len(_registered(Session, "do_orm_execute"))
    listeners.register()
    assert {name: len(_registered(Mapper, name)) for name in MAPPER_EVENTS} == before
    assert len(_registered(Session, "do_orm_execute")) == executing


def test_every_listener_is_registered_and_says_what_it_adds():
    for listener, adds in listeners.ORM_EXECUTE:
        assert event.contains(Session, "do_orm_execute", listener) and adds
    for name, listener, adds in listeners.MAPPER:
        assert event.contains(Mapper, name, listener) and adds
    for name, listener, adds, _ in listeners.ENGINE:
        assert event.contains(Engine, name, listener) and adds
