"""Attribute bags: every attribute no column maps, loaded into a dict (SELECT *), written back
entry by entry (changed entries SET, deleted ones REMOVEd, the rest left alone)."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import insert, select, update
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

import sa_dynamo
from sa_dynamo.exc import AttributeBagError


@pytest.fixture(scope="module")
def Product(engine):
    class Base(DeclarativeBase):
        pass

    class Product(Base):
        __tablename__ = f"bags_{uuid.uuid4().hex[:8]}"
        pk: Mapped[str] = mapped_column(primary_key=True)
        name: Mapped[str | None]
        total: Mapped[int | None] = mapped_column("order_total")  # stored under another name
        extra: Mapped[dict] = sa_dynamo.attribute_bag()

    Base.metadata.create_all(engine)
    yield Product
    Base.metadata.drop_all(engine)
    Base.registry.dispose()


def _stored(raw, Product, pk: str) -> dict:
    return raw.get_item(TableName=Product.__tablename__, Key={"pk": {"S": pk}})["Item"]


def test_a_bag_is_written_as_top_level_attributes(engine, raw, Product, sent):
    with Session(engine) as session:
        session.add(Product(pk="p1", name="pen", extra={"colour": "red", "sizes": [1, 2]}))
        session.flush()  # one row: the statement is rewritten before the events see it
        session.add(Product(pk="p2", name="pad"))
        session.commit()
    assert _stored(raw, Product, "p1") == {
        "pk": {"S": "p1"},
        "name": {"S": "pen"},
        "colour": {"S": "red"},
        "sizes": {"L": [{"N": "1"}, {"N": "2"}]},
    }
    assert _stored(raw, Product, "p2") == {"pk": {"S": "p2"}, "name": {"S": "pad"}}
    table = Product.__tablename__
    assert f"INSERT INTO \"{table}\" VALUE {{'pk': ?, 'name': ?, 'colour': ?, 'sizes': ?}}" in sent


def test_loading_fills_the_bag_with_every_unmapped_attribute(engine, raw, Product, sent):
    raw.put_item(
        TableName=Product.__tablename__,
        Item={"pk": {"S": "p3"}, "name": {"S": "ink"}, "vendor": {"S": "acme"}, "stock": {"N": "4"}},
    )
    query = select(Product).where(Product.pk.in_(["p3", "p2"]))
    with Session(engine) as session:
        bags = {p.pk: (p.name, p.extra) for p in session.scalars(query)}
        partiql = sa_dynamo.explain(session, select(Product).where(Product.pk == "p3")).partiql
    assert bags == {"p3": ("ink", {"vendor": "acme", "stock": 4}), "p2": ("pad", {})}
    assert sent[0] == f'SELECT * FROM "{Product.__tablename__}" WHERE "pk" IN [?, ?]'
    assert partiql == f'SELECT * FROM "{Product.__tablename__}" WHERE "pk" = ?'


def test_a_flush_sets_changed_entries_and_removes_deleted_ones(engine, raw, Product, sent):
    raw.put_item(
        TableName=Product.__tablename__,
        Item={"pk": {"S": "p4"}, "a": {"S": "keep"}, "b": {"S": "old"}, "c": {"S": "gone"}},
    )
    with Session(engine) as session:
        product = session.get(Product, "p4")
        product.extra["b"] = "new"
        del product.extra["c"]
        sent.clear()
        session.commit()
    assert sent == [f'UPDATE "{Product.__tablename__}" SET "b" = ? REMOVE "c" WHERE "pk" = ?']
    assert _stored(raw, Product, "p4") == {"pk": {"S": "p4"}, "a": {"S": "keep"}, "b": {"S": "new"}}


def test_replacing_the_bag_removes_what_the_new_dict_lacks(engine, raw, Product):
    with Session(engine) as session:
        product = session.get(Product, "p4")
        product.extra = {"a": "keep", "e": {"nested": True}}
        session.commit()
    stored = _stored(raw, Product, "p4")
    assert sorted(stored) == ["a", "e", "pk"] and stored["e"] == {"M": {"nested": {"BOOL": True}}}


def test_a_bag_key_that_a_column_maps_is_refused_with_advice(engine, Product):
    with Session(engine) as session:
        session.add(Product(pk="p5", extra={"name": "clash"}))
        with pytest.raises(AttributeBagError, match=r"set the attribute itself \(obj.name = ...\)"):
            session.flush()


def test_a_bag_key_that_names_a_renamed_column_names_the_attribute_to_set(engine, Product):
    with Session(engine) as session:
        session.add(Product(pk="p5", extra={"order_total": 3}))
        with pytest.raises(AttributeBagError, match=r"'order_total'.* \(obj.total = ...\)"):
            session.flush()


@pytest.mark.parametrize(
    ("core", "bag", "advice"),
    [
        (False, {"pk": "elsewhere"}, r"'pk'.*\(pk=...\)"),
        (False, {"order_total": 3}, r"'order_total'.*\(total=...\)"),  # the attribute of insert(Product)
        (True, {"order_total": 3}, r"'order_total'.*\(order_total=...\)"),  # the key of the Table's column
    ],
)
def test_a_core_write_whose_bag_names_a_column_is_refused_before_sending(
    engine, raw, Product, core, bag, advice
):
    """The ORM path refuses the same clash; a Core INSERT stored {"pk": "elsewhere"} as the key."""
    target = Product.__table__ if core else Product
    p7, p8, p9 = (f"{n}-{uuid.uuid4().hex[:6]}" for n in ("p7", "p8", "p9"))
    rows = [{"pk": p8, "extra": {"colour": "red"}}, {"pk": p9, "extra": bag}]
    with engine.begin() as conn:
        conn.execute(insert(Product).values(pk=p7, name="pen"))
    with engine.connect() as conn:
        with pytest.raises(AttributeBagError, match=advice):
            conn.execute(insert(target), rows)
        conn.rollback()
        with pytest.raises(AttributeBagError, match=advice):
            conn.execute(update(target).where(Product.__table__.c.pk == p7).values(extra=bag))
        conn.rollback()
    for pk in (p8, p9, "elsewhere"):
        assert "Item" not in raw.get_item(TableName=Product.__tablename__, Key={"pk": {"S": pk}})
    assert sorted(_stored(raw, Product, p7)) == ["name", "pk"]


def test_a_transaction_reads_the_bags_it_wrote(engine, Product):
    with Session(engine) as session:
        session.add(Product(pk="p9", name="nib", extra={"colour": "blue"}))
        session.flush()
        session.expunge_all()
        loaded = session.scalars(select(Product).where(Product.pk == "p9")).one()
        assert (loaded.name, loaded.extra) == ("nib", {"colour": "blue"})
        session.rollback()


def test_rows_sorted_on_the_client_keep_their_bags(engine, Product):
    """A SELECT * ordered on the client (a batch of full keys) sorts on the columns it read,
    and every row keeps its own bag, in SQLite's order (NULL first ascending)."""
    with Session(engine) as session, session.begin():
        session.add_all(
            [
                Product(pk="s1", name="cap", total=2, extra={"size": "L"}),
                Product(pk="s2", name="awl", total=None, extra={}),
                Product(pk="s3", name=None, total=1, extra={"size": "S", "used": True}),
            ]
        )
    keys = ["s1", "s2", "s3"]
    with Session(engine) as session:
        by_name = [
            (p.pk, p.extra)
            for p in session.scalars(select(Product).where(Product.pk.in_(keys)).order_by(Product.name))
        ]
        by_total = session.scalars(
            select(Product.pk).where(Product.pk.in_(keys)).order_by(Product.total.desc())
        ).all()
    assert by_name == [("s3", {"size": "S", "used": True}), ("s2", {}), ("s1", {"size": "L"})]
    assert by_total == ["s1", "s3", "s2"]
