"""Single-table inheritance on DynamoDB: identities written, classes loaded, foreign kinds never
returned, key templates computed and turned into key conditions, item collections loaded by Query."""

from __future__ import annotations

import logging
import re

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DataError, InvalidRequestError
from sqlalchemy.orm import Session

import sa_dynamo


@pytest.fixture(scope="module")
def loaded(engine, raw, store):
    """Customer 42 with two orders and three order lines, plus a foreign Invoice in its partition."""
    Customer, Order, OrderItem = store.Customer, store.Order, store.OrderItem
    with Session(engine) as session:
        session.add_all(
            [
                Customer(customer_id="42", name="Ann"),
                Order(customer_id="42", order_id="1", status="PAID", total=30),
                Order(customer_id="42", order_id="2", status=None, total=5),
                OrderItem(customer_id="42", order_id="1", line=1, product="pen"),
                OrderItem(customer_id="42", order_id="1", line=2, product="ink"),
                OrderItem(customer_id="42", order_id="2", line=1, product="pad"),
                Customer(customer_id="7", name="Bob"),
            ]
        )
        session.commit()
    raw.put_item(
        TableName=Customer.__table__.name,
        Item={"pk": {"S": "CUSTOMER#42"}, "sk": {"S": "INVOICE#1"}, "$type": {"S": "Invoice"}},
    )
    return store


def get_item(raw, table, pk: str, sk: str) -> dict:
    return raw.get_item(TableName=table, Key={"pk": {"S": pk}, "sk": {"S": sk}}).get("Item", {})


def test_flush_writes_identities_and_templated_keys(raw, loaded):
    Item = loaded.Item
    order = get_item(raw, Item.__table__.name, "CUSTOMER#42", "ORDER#1")
    assert order["$type"] == {"S": "Order"}
    assert order["gsi1pk"] == {"S": "STATUS#PAID"}
    assert order["gsi1sk"] == {"S": "ORDER#1"}
    line = get_item(raw, Item.__table__.name, "CUSTOMER#42", "ORDER#1#ITEM#2")
    assert line["$type"] == {"S": "OrderItem"} and line["product"] == {"S": "ink"}


def test_template_with_a_none_source_leaves_the_attribute_absent(raw, loaded):
    Item = loaded.Item
    order = get_item(raw, Item.__table__.name, "CUSTOMER#42", "ORDER#2")
    assert "gsi1pk" not in order and "status" not in order
    assert order["gsi1sk"] == {"S": "ORDER#2"}


def test_base_class_query_over_a_partition_returns_every_kind_but_foreign_ones(engine, loaded, sent):
    Item, OrderItem = loaded.Item, loaded.OrderItem
    with Session(engine) as session:
        items = session.scalars(select(Item).where(Item.pk == "CUSTOMER#42")).all()
        kinds = [(type(i).__name__, i.sk) for i in items]
        products = [i.product for i in items if isinstance(i, OrderItem)]
    assert kinds == [
        ("Customer", "METADATA"),
        ("Order", "ORDER#1"),
        ("OrderItem", "ORDER#1#ITEM#1"),
        ("OrderItem", "ORDER#1#ITEM#2"),
        ("Order", "ORDER#2"),
        ("OrderItem", "ORDER#2#ITEM#1"),
    ]
    assert products == ["pen", "ink", "pad"]
    table = Item.__table__.name
    assert sent == [
        f'SELECT "pk", "sk", "$type", "gsi1pk", "gsi1sk", "customer_id", "name", "order_id", "status", "total", '
        f'"line", "product" FROM "{table}" WHERE "pk" = ? AND ("$type" IN [?, ?, ?, ?])'
    ]


def test_derived_class_query_gets_its_subtree_and_the_key_conditions(engine, loaded, sent):
    Item, Order = loaded.Item, loaded.Order
    with Session(engine) as session:
        orders = session.scalars(select(Order).where(Order.customer_id == "42")).all()
        assert [(o.order_id, o.status, o.total) for o in orders] == [("1", "PAID", 30), ("2", None, 5)]
    table = Item.__table__.name
    assert sent == [
        f'SELECT "pk", "sk", "$type", "gsi1pk", "gsi1sk", "customer_id", "order_id", "status", "total" '
        f'FROM "{table}" WHERE "pk" = ? AND begins_with("sk", ?) AND ("customer_id" = ? AND "$type" IN [?])'
    ]


def test_an_in_list_on_a_template_source_is_a_query_on_the_partition_keys(engine, loaded, sent):
    Item, Customer = loaded.Item, loaded.Customer
    with Session(engine) as session:
        query = select(Customer).where(Customer.customer_id.in_(["42", "7", "99"]))
        found = session.scalars(query.execution_options(dynamodb_scan="error")).all()
        assert sorted((c.customer_id, c.name) for c in found) == [("42", "Ann"), ("7", "Bob")]
    table = Item.__table__.name
    assert sent == [
        f'SELECT "pk", "sk", "$type", "gsi1pk", "gsi1sk", "customer_id", "name" FROM "{table}" '
        'WHERE "pk" IN [?, ?, ?] AND "sk" = ? AND ("customer_id" IN [?, ?, ?] AND "$type" IN [?])'
    ]


def test_session_get_on_a_subclass_returns_none_for_another_class(engine, loaded):
    Item, Customer, Order = loaded.Item, loaded.Customer, loaded.Order
    with Session(engine) as session:
        assert session.get(Order, ("CUSTOMER#42", "METADATA")) is None
        assert session.get(Customer, sa_dynamo.key_of(Customer, customer_id="42")).name == "Ann"
        assert session.get(Item, ("CUSTOMER#42", "INVOICE#1")) is None


def test_item_collection_lazy_loads_with_one_query(engine, loaded, sent):
    Item, Customer = loaded.Item, loaded.Customer
    with Session(engine) as session:
        customer = session.get(Customer, ("CUSTOMER#42", "METADATA"))
        assert [o.order_id for o in customer.orders] == ["1", "2"]
    table = Item.__table__.name
    assert sent[-1] == (
        f'SELECT "pk", "sk", "$type", "gsi1pk", "gsi1sk", "customer_id", "order_id", "status", "total" '
        f'FROM "{table}" WHERE "pk" = ? AND begins_with("sk", ?) AND ("$type" IN [?]) ORDER BY "sk"'
    )


def test_changing_a_template_source_recomputes_the_index_key(engine, raw, loaded):
    Item, Order = loaded.Item, loaded.Order
    with Session(engine) as session:
        order = session.get(Order, ("CUSTOMER#42", "ORDER#2"))
        order.status = "SHIPPED"
        session.commit()
    assert get_item(raw, Item.__table__.name, "CUSTOMER#42", "ORDER#2")["gsi1pk"] == {"S": "STATUS#SHIPPED"}
    with Session(engine) as session:
        session.get(Order, ("CUSTOMER#42", "ORDER#2")).status = None
        session.commit()
    assert "gsi1pk" not in get_item(raw, Item.__table__.name, "CUSTOMER#42", "ORDER#2")


def test_changing_a_key_source_is_refused_before_anything_is_sent(engine, raw, loaded):
    Item, Order = loaded.Item, loaded.Order
    with Session(engine) as session:
        order = session.get(Order, ("CUSTOMER#42", "ORDER#1"))
        order.order_id = "9"
        with pytest.raises(InvalidRequestError, match="DynamoDB keys are immutable"):
            session.flush()
    assert get_item(raw, Item.__table__.name, "CUSTOMER#42", "ORDER#9") == {}


def test_missing_key_source_is_an_error(engine, loaded):
    Customer = loaded.Customer
    with Session(engine) as session:
        session.add(Customer(name="nobody"))
        with pytest.raises(InvalidRequestError, match="customer_id is None"):
            session.flush()


def test_attributes_written_by_others_survive_an_orm_update(engine, raw, loaded):
    Item, Customer = loaded.Item, loaded.Customer
    table = Item.__table__.name
    raw.update_item(
        TableName=table,
        Key={"pk": {"S": "CUSTOMER#7"}, "sk": {"S": "METADATA"}},
        UpdateExpression="SET loyalty = :l",
        ExpressionAttributeValues={":l": {"N": "3"}},
    )
    with Session(engine) as session:
        session.get(Customer, ("CUSTOMER#7", "METADATA")).name = "Robert"
        session.commit()
    stored = get_item(raw, table, "CUSTOMER#7", "METADATA")
    assert stored["name"] == {"S": "Robert"} and stored["loyalty"] == {"N": "3"}


def test_setting_none_removes_the_attribute(engine, raw, loaded):
    Item, Customer = loaded.Item, loaded.Customer
    with Session(engine) as session:
        session.get(Customer, ("CUSTOMER#7", "METADATA")).name = None
        session.commit()
    assert "name" not in get_item(raw, Item.__table__.name, "CUSTOMER#7", "METADATA")


def test_joinedload_of_an_item_collection_reads_its_partition(engine, loaded, sent):
    """The customer by its key, then its orders by a Query of its partition (the collection's
    sort-key prefix), joined on the client: the orders selectinload() loads."""
    from sqlalchemy.orm import joinedload, selectinload

    Customer = loaded.Customer
    customer = select(Customer).where(Customer.customer_id == "42")
    loaded_by = {}
    for option in (joinedload, selectinload):
        with Session(engine) as session:
            found = session.scalars(customer.options(option(Customer.orders))).unique().all()
            loaded_by[option] = [(c.customer_id, sorted(o.order_id for o in c.orders)) for c in found]
        if option is joinedload:
            assert len(sent) == 3  # the computed statement, then its two reads
            assert sent[2].endswith('WHERE "pk" IN [?] AND begins_with("sk", ?) AND ("$type" IN [?])')
    assert loaded_by[joinedload] == loaded_by[selectinload] == [("42", ["1", "2"])]


def test_orders_by_status_use_the_index_through_the_template(engine, loaded, sent):
    Item, Order = loaded.Item, loaded.Order
    with Session(engine) as session:
        paid = session.scalars(select(Order).where(Order.status == "PAID")).all()
        assert [(o.customer_id, o.order_id) for o in paid] == [("42", "1")]
    table = Item.__table__.name
    assert sent == [
        f'SELECT "pk", "sk", "$type", "gsi1pk", "gsi1sk", "customer_id", "order_id", "status", "total" '
        f'FROM "{table}"."gsi1" WHERE "gsi1pk" = ? AND begins_with("gsi1sk", ?) AND ("status" = ? AND "$type" IN [?])'
    ]


def test_a_sort_key_condition_of_the_query_replaces_the_template_prefix(engine, loaded, sent):
    Item, OrderItem = loaded.Item, loaded.OrderItem
    with Session(engine) as session:
        query = select(OrderItem.product).where(
            OrderItem.customer_id == "42", OrderItem.sk.startswith("ORDER#1#")
        )
        assert session.scalars(query).all() == ["pen", "ink"]
    table = Item.__table__.name
    assert sent == [
        f'SELECT "product" FROM "{table}" WHERE "pk" = ? AND begins_with("sk", ?) '
        f'AND ("customer_id" = ? AND "$type" IN [?])'
    ]


@pytest.mark.parametrize("policy", ["skip", "raise", "base"])
@pytest.mark.parametrize("unfiltered", ["filter_off", "from_statement"])
def test_unknown_kinds_follow_the_policy_when_the_filter_is_off(engine, loaded, policy, unfiltered):
    """With the filter turned off, or the query's own text (sent as written, no filter added)."""
    Item = loaded.Item
    if unfiltered == "filter_off":
        query = select(Item).where(Item.pk == "CUSTOMER#42", Item.sk >= "INVOICE#")
        query, parameters = query.execution_options(dynamodb_discriminator_filter=False), {}
    else:
        statement = text(f"SELECT * FROM \"{Item.__table__.name}\" WHERE pk = :p AND sk >= 'INVOICE#'")
        query, parameters = select(Item).from_statement(statement), {"p": "CUSTOMER#42"}
    query = query.execution_options(dynamodb_unknown_type=policy)
    with Session(engine) as session:
        if policy == "raise":
            with pytest.raises(DataError, match="'Invoice', which no mapped class uses"):
                session.scalars(query, parameters).all()
            return
        found = [(type(i).__name__, i.sk) for i in session.scalars(query, parameters)]
    expected_invoice = [("Item", "INVOICE#1")] if policy == "base" else []
    assert found == [
        *expected_invoice,
        ("Customer", "METADATA"),
        ("Order", "ORDER#1"),
        ("OrderItem", "ORDER#1#ITEM#1"),
        ("OrderItem", "ORDER#1#ITEM#2"),
        ("Order", "ORDER#2"),
        ("OrderItem", "ORDER#2#ITEM#1"),
    ]


def test_unknown_kinds_are_skipped_and_counted_by_default(engine, loaded, caplog):
    Item = loaded.Item
    query = (
        select(Item).where(Item.pk == "CUSTOMER#42").execution_options(dynamodb_discriminator_filter=False)
    )
    with caplog.at_level(logging.INFO, logger="sa_dynamo"), Session(engine) as session:
        kinds = {type(i).__name__ for i in session.scalars(query)}
    assert kinds == {"Customer", "Order", "OrderItem"}
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(skipped) == 1  # the statement's line, none per item
    assert re.search(
        r": 1 request, 7 items read, 6 rows, 1 of unknown kinds skipped \('Invoice'\), ", skipped[0]
    )


def test_a_statement_s_own_unknown_type_policy_wins_over_its_connection_s(engine, loaded):
    """SQLAlchemy lets a connection's execution option override a statement's; the statement's
    own dynamodb_* options are the more specific ones (DynamoDBExecutionContext.options_in_force)."""
    Item = loaded.Item
    query = select(Item).where(Item.pk == "CUSTOMER#42", Item.sk >= "INVOICE#")
    query = query.execution_options(dynamodb_discriminator_filter=False)
    with (
        engine.connect().execution_options(dynamodb_unknown_type="raise") as strict,
        Session(strict) as session,
    ):
        skipping = session.scalars(query.execution_options(dynamodb_unknown_type="skip")).all()
        assert "INVOICE#1" not in [i.sk for i in skipping] and len(skipping) == 6
    lenient = engine.connect().execution_options(dynamodb_unknown_type="skip")
    with lenient, Session(lenient) as session, pytest.raises(DataError, match="'Invoice', which no mapped"):
        session.scalars(query.execution_options(dynamodb_unknown_type="raise")).all()


@pytest.mark.parametrize("policy", ["skip", "raise"])
def test_a_discriminator_of_another_type_is_an_unknown_kind_when_the_filter_is_off(
    engine, raw, loaded, policy
):
    """A `$type` written as a number by another writer names no mapped kind: the policy decides,
    as for an unknown string (DynamoDB's `IN` filter would not have returned it either)."""
    Customer, Item = loaded.Customer, loaded.Item
    with Session(engine) as session:
        session.add(Customer(customer_id=f"99{policy}", name="Cy"))
        session.commit()
    raw.put_item(
        TableName=Item.__table__.name,
        Item={"pk": {"S": f"CUSTOMER#99{policy}"}, "sk": {"S": "LEGACY#1"}, "$type": {"N": "5"}},
    )
    query = (
        select(Item)
        .where(Item.pk == f"CUSTOMER#99{policy}")
        .execution_options(dynamodb_discriminator_filter=False, dynamodb_unknown_type=policy)
    )
    with Session(engine) as session:
        if policy == "raise":
            with pytest.raises(DataError, match="'5', which no mapped class uses"):
                session.scalars(query).all()
            return
        assert [(type(i).__name__, i.sk) for i in session.scalars(query)] == [("Customer", "METADATA")]


@pytest.mark.parametrize("policy", ["skip", "raise", "base"])
def test_a_subclass_s_from_statement_text_follows_the_unknown_type_policy(engine, loaded, policy):
    """For a subclass's entity too; "base" loads an unknown kind as the root class, which a
    subclass's query cannot hold: SQLAlchemy says so (as it does for a mapped kind of another
    branch, on SQLite too)."""
    Order = loaded.Order
    statement = text(
        f"SELECT * FROM \"{Order.__table__.name}\" WHERE pk = :p AND sk IN ('INVOICE#1', 'ORDER#1', 'ORDER#2')"
    )
    query = select(Order).from_statement(statement).execution_options(dynamodb_unknown_type=policy)
    with Session(engine) as session:
        if policy != "skip":
            error, message = {
                "raise": (DataError, "'Invoice', which no mapped class uses"),
                "base": (
                    InvalidRequestError,
                    r"refers to Mapper\[Item\(.*not a sub-mapper of the requested Mapper\[Order",
                ),
            }[policy]
            with pytest.raises(error, match=message):
                session.scalars(query, {"p": "CUSTOMER#42"}).all()
            return
        found = [(type(i).__name__, i.sk) for i in session.scalars(query, {"p": "CUSTOMER#42"})]
    assert found == [("Order", "ORDER#1"), ("Order", "ORDER#2")]
