"""Many-to-many as an adjacency list: one membership item per (user, group), in the user's
partition (``USER#1`` / ``GROUP#a``) and, through an inverted index, in the group's. The
collections are an association object's two sides plus association proxies; each side loads
with one Query, and adding or removing writes the membership item in the session's transaction."""

from __future__ import annotations

import re
import uuid
from types import SimpleNamespace

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Session, selectinload
from support.memberships import membership_models
from support.sent import operations_sent

import sa_dynamo
from sa_dynamo.orm.relationship_loads import scanning_relationships


def make_groups(table: str) -> SimpleNamespace:
    class Base(DeclarativeBase):
        pass

    return SimpleNamespace(Base=Base, **vars(membership_models(Base, table)))


@pytest.fixture
def models(engine):
    models = make_groups(f"m2m_{uuid.uuid4().hex[:8]}")
    models.Base.metadata.create_all(engine)
    with Session(engine) as session:
        ann, bob = models.User(user_id="1", name="ann"), models.User(user_id="2", name="bob")
        admins, devs, ops = (models.Group(group_id=g, title=g) for g in ("admins", "devs", "ops"))
        ann.groups.extend([admins, devs])
        bob.groups.append(devs)
        session.add_all([ann, bob, ops])
        session.commit()
    yield models
    models.Base.metadata.drop_all(engine)
    models.Base.registry.dispose()


@pytest.fixture
def session(engine):
    with Session(engine.execution_options(dynamodb_scan="error")) as session:
        yield session


@pytest.fixture
def requests(engine):
    """The names of the requests sent to DynamoDB from now on (the engine's one connection)."""
    with engine.connect() as conn:
        connection = conn.connection.dbapi_connection
    with operations_sent(connection) as names:
        yield names


def user(session, models, user_id):
    return session.get(models.User, sa_dynamo.key_of(models.User, user_id=user_id))


def group(session, models, group_id):
    return session.get(models.Group, sa_dynamo.key_of(models.Group, group_id=group_id))


def stored(raw, models) -> list[tuple[str, str]]:
    items = raw.scan(TableName=models.Membership.__tablename__, ConsistentRead=True)["Items"]
    return sorted((i["pk"]["S"], i["sk"]["S"]) for i in items if i["$type"]["S"] == "Membership")


def roles(raw, models) -> dict[tuple[str, str], str | None]:
    """The role of each of ann's stored memberships."""
    items = raw.query(
        TableName=models.Membership.__tablename__,
        KeyConditionExpression="pk = :pk AND begins_with(sk, :group)",
        ExpressionAttributeValues={":pk": {"S": "USER#1"}, ":group": {"S": "GROUP#"}},
        ConsistentRead=True,
    )["Items"]
    return {(i["pk"]["S"], i["sk"]["S"]): i.get("role", {}).get("S") for i in items}


def test_a_users_groups_load_with_one_query_on_the_users_partition(models, session, sent):
    ann = user(session, models, "1")
    sent.clear()
    assert [m.group_id for m in ann.memberships] == ["admins", "devs"]
    table = models.Membership.__tablename__
    assert sent == [
        f'SELECT "pk", "sk", "$type", "user_id", "group_id", "role" FROM "{table}" WHERE "pk" = ? '
        'AND begins_with("sk", ?) AND ("user_id" = ? AND "$type" IN [?])'
    ]
    assert sorted(g.title for g in ann.groups) == ["admins", "devs"]


def test_a_groups_members_load_with_one_query_on_the_inverted_index(models, session, sent):
    devs = group(session, models, "devs")
    sent.clear()
    assert sorted(m.user_id for m in devs.memberships) == ["1", "2"]
    table = models.Membership.__tablename__
    assert sent == [
        f'SELECT "pk", "sk", "$type", "user_id", "group_id", "role" FROM "{table}"."inverted" WHERE "sk" = ? '
        'AND begins_with("pk", ?) AND ("group_id" = ? AND "$type" IN [?])'
    ]
    assert sorted(u.name for u in devs.members) == ["ann", "bob"]
    assert group(session, models, "ops").members == []


def test_selectinload_lists_the_targets_with_one_more_query(models, session, requests, sent):
    query = (
        select(models.Group)
        .where(models.Group.group_id == "devs")
        .options(selectinload(models.Group.memberships).selectinload(models.Membership.user))
    )
    devs = session.scalars(query).one()
    assert sorted(u.name for u in devs.members) == ["ann", "bob"]
    assert requests == ["ExecuteStatement"] * 3  # the group, its memberships, their users
    assert 'FROM "' + models.User.__tablename__ + '" WHERE "pk" IN [?, ?] AND begins_with("sk", ?)' in sent[2]


def test_selectinload_of_many_parents_reads_at_most_50_partitions_per_query(models, session, sent):
    for first in (0, 30):  # 60 users and their memberships: two transactions under 100 actions
        with Session(session.bind) as writer:
            ops = group(writer, models, "ops")
            writer.add_all(models.User(user_id=f"u{n}", groups=[ops]) for n in range(first, first + 30))
            writer.commit()
    sent.clear()
    everyone = select(models.User).options(selectinload(models.User.memberships))
    found = session.scalars(everyone, execution_options={"dynamodb_scan": "allow"}).all()  # users: a Scan
    assert len(found) == 62
    assert {u.user_id: [m.group_id for m in u.memberships] for u in found if u.user_id.startswith("u")} == {
        f"u{n}": ["ops"] for n in range(60)
    }
    partitions = [re.search(r'WHERE "pk" IN \[([^\]]*)\] AND begins_with', s).group(1) for s in sent[1:]]
    assert [p.count("?") for p in partitions] == [50, 12]


def test_adding_writes_one_membership_item_in_the_commits_one_transaction(models, session, requests, raw):
    ann, ops = user(session, models, "1"), group(session, models, "ops")
    bob = user(session, models, "2")
    ann.groups.append(ops)
    ops.members.append(bob)
    requests.clear()
    session.commit()
    assert requests == ["ExecuteTransaction"]
    assert stored(raw, models) == [
        ("USER#1", "GROUP#admins"),
        ("USER#1", "GROUP#devs"),
        ("USER#1", "GROUP#ops"),
        ("USER#2", "GROUP#devs"),
        ("USER#2", "GROUP#ops"),
    ]
    assert sorted(u.name for u in group(session, models, "ops").members) == ["ann", "bob"]


def test_removing_from_either_side_deletes_the_membership_item(models, session, raw):
    ann, devs = user(session, models, "1"), group(session, models, "devs")
    ann.groups.remove(group(session, models, "admins"))
    devs.members.remove(user(session, models, "2"))
    session.commit()
    assert stored(raw, models) == [("USER#1", "GROUP#devs")]
    session.expire_all()
    assert [g.title for g in ann.groups] == ["devs"]
    assert [u.name for u in devs.members] == ["ann"]


def test_replacing_a_membership_by_a_new_object_of_the_same_key_is_refused_as_in_sql(models, session, raw):
    """The new object's key comes from its templates at flush, so the unit of work does not see
    that it replaces the removed one: it inserts the new item, then deletes the old. SQLite
    (the same models and code) fails that INSERT with IntegrityError in the flush and keeps
    the old row; so does DynamoDB, at the DELETE, and nothing is written. Flushing the removal
    first deletes, then inserts: the new item replaces the old."""
    ann, admins = user(session, models, "1"), group(session, models, "admins")
    old = next(m for m in ann.memberships if m.group_id == "admins")
    old.role = "old"
    session.commit()
    ann.memberships.remove(old)
    ann.memberships.append(models.Membership(group=admins, role="new"))
    with pytest.raises(IntegrityError, match="already stored"):
        session.flush()
    session.rollback()
    assert roles(raw, models) == {("USER#1", "GROUP#admins"): "old", ("USER#1", "GROUP#devs"): None}

    ann.memberships.remove(next(m for m in ann.memberships if m.group_id == "admins"))
    session.flush()
    ann.memberships.append(models.Membership(group=admins, role="new"))
    session.commit()
    assert roles(raw, models) == {("USER#1", "GROUP#admins"): "new", ("USER#1", "GROUP#devs"): None}


def test_a_flushed_membership_is_seen_by_the_other_side_before_commit(models, session, raw):
    user(session, models, "2").groups.append(group(session, models, "admins"))
    session.flush()
    admins = group(session, models, "admins")
    session.expire(admins, ["memberships"])
    assert sorted(u.name for u in admins.members) == ["ann", "bob"]
    session.rollback()
    assert ("USER#2", "GROUP#admins") not in stored(raw, models)


def test_sa_dynamo_check_does_not_list_the_membership_relationships(models):
    mappers = [models.User.__mapper__, models.Group.__mapper__, models.Membership.__mapper__]
    assert scanning_relationships(mappers) == []
