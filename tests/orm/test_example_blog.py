"""examples/blog.py (after Dynatable's blog guide): every access pattern is a GetItem or a
Query, never a Scan, and returns exactly the expected objects."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from support.examples import loaded_example

import sa_dynamo

TYPED = 'AND ("$type" IN [?])'


@pytest.fixture(scope="module")
def blog(engine):
    yield from loaded_example("blog", engine)


@pytest.fixture
def session(engine):
    with Session(engine.execution_options(dynamodb_scan="error")) as session:
        yield session


def _where(statement: str) -> str:
    return statement.split(" WHERE ", 1)[1]


def test_a_user_is_a_get_item_and_a_taken_username_an_integrity_error(blog, session, sent):
    assert blog.user(session, "alice").email == "alice@example.com"
    assert _where(sent[0]) == f'"pk" = ? AND "sk" = ? {TYPED}'
    session.add(blog.User(username="alice", name="Someone else"))
    with pytest.raises(IntegrityError):
        session.commit()


def test_a_post_is_a_get_item_and_its_authors_posts_one_query(blog, session, sent):
    assert blog.post(session, "alice", "p2").title == "Drafts"
    alice = blog.user(session, "alice")
    sent.clear()
    assert [p.post_id for p in alice.posts] == ["p1", "p2"]
    assert [_where(s) for s in sent] == [f'"pk" = ? AND begins_with("sk", ?) {TYPED} ORDER BY "sk"']


def test_published_posts_newest_first(blog, session):
    query = blog.published_posts()
    plan = sa_dynamo.explain(session, query)
    assert (plan.operation, plan.index, plan.key_condition) == (
        "Query",
        "gsi1",
        '"gsi1pk" = ? AND begins_with("gsi1sk", ?)',
    )
    assert [p.post_id for p in session.scalars(query)] == ["p3", "p1"]


def test_a_condition_on_published_reads_the_sparse_index(blog, session):
    """``published == True`` is written as a constant, not a bound value; it still pins the
    computed partition key (and stays a filter, so the rows are exactly the published ones)."""
    query = select(blog.Post).where(blog.Post.published == True)  # noqa: E712
    plan = sa_dynamo.explain(session, query)
    assert (plan.operation, plan.index, plan.key_condition) == (
        "Query",
        "gsi1",
        '"gsi1pk" = ? AND begins_with("gsi1sk", ?)',
    )
    assert sorted(p.post_id for p in session.scalars(query)) == ["p1", "p3"]


def test_the_comments_on_a_post_are_one_query_on_its_partition(blog, session, sent):
    first = blog.post(session, "alice", "p1")
    sent.clear()
    assert [(c.comment_id, c.username) for c in first.comments] == [("c1", "bob"), ("c2", "alice")]
    assert [_where(s) for s in sent] == [
        '"pk" = ? AND begins_with("sk", ?) AND ("post_id" = ? AND "$type" IN [?]) ORDER BY "sk"'
    ]


def test_a_users_comments_are_one_query_on_the_index(blog, session, sent):
    query = blog.comments_by("bob")
    plan = sa_dynamo.explain(session, query)
    assert (plan.operation, plan.index) == ("Query", "gsi1")
    assert sorted(c.comment_id for c in session.scalars(query)) == ["c1", "c3"]
    bob = blog.user(session, "bob")
    sent.clear()
    assert [c.comment_id for c in bob.comments] == ["c1", "c3"]
    assert [s.split(" FROM ")[1] for s in sent] == [
        f'"{blog.BlogItem.__tablename__}"."gsi1" WHERE "gsi1pk" = ? AND begins_with("gsi1sk", ?) '
        'AND ("username" = ? AND "$type" IN [?]) ORDER BY "gsi1sk"'
    ]


def test_the_tags_of_a_post_are_one_query_on_its_partition(blog, session, sent):
    sqlalchemy_post = blog.post(session, "bob", "p3")
    sent.clear()
    assert [t.tag_name for t in sqlalchemy_post.taggings] == ["dynamodb", "python"]
    assert [_where(s) for s in sent] == [
        '"pk" = ? AND begins_with("sk", ?) AND ("post_id" = ? AND "username" = ? AND "$type" IN [?]) ORDER BY "sk"'
    ]
    assert [t.tag_name for t in sqlalchemy_post.tags] == ["dynamodb", "python"]


def test_the_posts_with_a_tag_are_one_query_on_the_index_and_one_on_their_partitions(blog, session, sent):
    tag = session.scalars(blog.tag_with_posts("python")).one()
    assert [(p.username, p.post_id) for p in tag.posts] == [("alice", "p2"), ("bob", "p3")]
    assert [_where(s) for s in sent] == [
        '"pk" = ? AND "sk" = ? AND ("tag_name" = ? AND "$type" IN [?])',
        '"gsi1pk" IN [?] AND begins_with("gsi1sk", ?) AND ("tag_name" IN [?] AND "$type" IN [?])',
        '"pk" IN [?, ?] AND begins_with("sk", ?) AND ("post_id" IN [?, ?] AND "username" IN [?, ?] '
        'AND "$type" IN [?])',
    ]


def test_tagging_and_untagging_write_only_the_membership_item(blog, session, raw):
    drafts, dynamodb = (
        blog.post(session, "alice", "p2"),
        session.scalars(blog.tag_with_posts("dynamodb")).one(),
    )
    dynamodb.posts.append(drafts)
    session.commit()
    table = blog.BlogItem.__tablename__
    key = {"pk": {"S": "POST#p2"}, "sk": {"S": "TAG#dynamodb"}}
    item = raw.get_item(TableName=table, Key=key)["Item"]
    assert (item["gsi1pk"], item["gsi1sk"], item["username"]) == (
        {"S": "TAG#dynamodb"},
        {"S": "POST#p2"},
        {"S": "alice"},
    )
    drafts.tags.remove(dynamodb)
    session.commit()
    assert "Item" not in raw.get_item(TableName=table, Key=key)
    assert [p.post_id for p in session.scalars(blog.tag_with_posts("dynamodb")).one().posts] == ["p1", "p3"]
