"""A blog store in one table, after Dynatable's blog guide: users, posts, comments, and tags
that posts share (a many-to-many).

Every item lives in one table with a generic key (``pk``, ``sk``) and one global index
(``gsi1pk``, ``gsi1sk``):

====================  ===================  =====================  ==================  ==================
item                  pk                   sk                     gsi1pk              gsi1sk
====================  ===================  =====================  ==================  ==================
User                  USER#{username}      USER#{username}
Post                  USER#{username}      POST#{post_id}         POSTS#true          POST#{post_id}
                                                                  (published only)
Comment               POST#{post_id}       COMMENT#{comment_id}   USER#{username}     COMMENT#{comment_id}
Tag                   TAG#{tag_name}       TAG#{tag_name}
Tagging (post, tag)   POST#{post_id}       TAG#{tag_name}         TAG#{tag_name}      POST#{post_id}
====================  ===================  =====================  ==================  ==================

Access patterns (the guide's list), each a GetItem or a Query, never a Scan:

1. a user by username (GetItem); creating a user whose username exists is an IntegrityError;
2. a post (GetItem);
3. a user's posts (Query on the user's partition, ``sk`` beginning ``POST#``);
4. published posts, newest first (Query on ``gsi1``, partition ``POSTS#true``);
5. the comments on a post (Query on the post's partition, ``sk`` beginning ``COMMENT#``);
6. a user's comments (Query on ``gsi1``, partition ``USER#{username}``);
7. the tags of a post (Query on the post's partition, ``sk`` beginning ``TAG#``);
8. the posts with a tag (Query on ``gsi1``, partition ``TAG#{tag_name}``; the posts themselves
   with one more Query over their partitions, where the guide sends a BatchGetItem).

A Tagging is the one membership item of a (post, tag) pair: ``post.tags.append(tag)`` and
``tag.posts.remove(post)`` write or delete it in the session's transaction.

Run it: ``python examples/blog.py`` (starts a private DynamoDB Local).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Index, create_engine, select
from sqlalchemy.ext.associationproxy import association_proxy
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship, selectinload

import sa_dynamo


class Base(DeclarativeBase):
    pass


class BlogItem(sa_dynamo.SingleTable, Base):
    __tablename__ = "blog"
    __table_args__ = (Index("gsi1", "gsi1pk", "gsi1sk", dynamodb_projection="ALL"),)
    pk: Mapped[str] = mapped_column(primary_key=True)
    sk: Mapped[str] = mapped_column(primary_key=True)
    gsi1pk: Mapped[str | None]
    gsi1sk: Mapped[str | None]
    username: Mapped[str | None]  # a user's, a post's author, a comment's author
    post_id: Mapped[str | None]
    tag_name: Mapped[str | None]


class User(BlogItem):
    __key_templates__ = {"pk": "USER#{username}", "sk": "USER#{username}"}
    name: Mapped[str | None]
    email: Mapped[str | None]
    posts = sa_dynamo.item_collection("Post", sort_key_prefix="POST#", order_by="Post.sk")
    comments: Mapped[list[Comment]] = relationship(
        primaryjoin="User.username == remote(foreign(Comment.username))",
        viewonly=True,
        order_by="Comment.gsi1sk",
    )


def published_partition(post: Any) -> str | None:
    """Only published posts are in ``gsi1``'s ``POSTS#true`` partition (a sparse index)."""
    return "POSTS#true" if post.published else None


class Post(BlogItem):
    __key_templates__ = {
        "pk": "USER#{username}",
        "sk": "POST#{post_id}",
        "gsi1pk": sa_dynamo.computed_key(published_partition, "published"),
        "gsi1sk": "POST#{post_id}",
    }
    title: Mapped[str | None]
    published: Mapped[bool | None]
    comments: Mapped[list[Comment]] = relationship(
        primaryjoin="Post.post_id == remote(foreign(Comment.post_id))", viewonly=True, order_by="Comment.sk"
    )
    taggings: Mapped[list[Tagging]] = relationship(
        primaryjoin="and_(Post.post_id == remote(foreign(Tagging.post_id)), "
        "Post.username == remote(foreign(Tagging.username)))",
        back_populates="post",
        cascade="all, delete-orphan",
        order_by="Tagging.sk",
    )
    tags = association_proxy("taggings", "tag", creator=lambda tag: Tagging(tag=tag))


class Comment(BlogItem):
    __key_templates__ = {
        "pk": "POST#{post_id}",
        "sk": "COMMENT#{comment_id}",
        "gsi1pk": "USER#{username}",
        "gsi1sk": "COMMENT#{comment_id}",
    }
    comment_id: Mapped[str | None]
    content: Mapped[str | None]


class Tag(BlogItem):
    __key_templates__ = {"pk": "TAG#{tag_name}", "sk": "TAG#{tag_name}"}
    taggings: Mapped[list[Tagging]] = relationship(
        primaryjoin="Tag.tag_name == remote(foreign(Tagging.tag_name))",
        back_populates="tag",
        cascade="all, delete-orphan",
        order_by="Tagging.gsi1sk",
    )
    posts = association_proxy("taggings", "post", creator=lambda post: Tagging(post=post))


class Tagging(BlogItem):
    """The membership item of one (post, tag) pair; it carries the post's author, whose
    partition holds the post."""

    __key_templates__ = {
        "pk": "POST#{post_id}",
        "sk": "TAG#{tag_name}",
        "gsi1pk": "TAG#{tag_name}",
        "gsi1sk": "POST#{post_id}",
    }
    post: Mapped[Post] = relationship(
        primaryjoin="and_(remote(Post.post_id) == foreign(Tagging.post_id), "
        "remote(Post.username) == foreign(Tagging.username))",
        back_populates="taggings",
    )
    tag: Mapped[Tag] = relationship(
        primaryjoin="remote(Tag.tag_name) == foreign(Tagging.tag_name)", back_populates="taggings"
    )


def user(session: Session, username: str) -> User | None:
    return session.get(User, sa_dynamo.key_of(User, username=username))


def post(session: Session, username: str, post_id: str) -> Post | None:
    return session.get(Post, sa_dynamo.key_of(Post, username=username, post_id=post_id))


def published_posts() -> Any:
    """Newest first: post ids sort by creation time (the guide uses ULIDs)."""
    return select(Post).where(Post.gsi1pk == "POSTS#true").order_by(Post.gsi1sk.desc())


def comments_by(username: str) -> Any:
    return select(Comment).where(Comment.username == username)


def tag_with_posts(tag_name: str) -> Any:
    """A tag, its taggings (one Query on ``gsi1``) and their posts (one more Query)."""
    return (
        select(Tag)
        .where(Tag.tag_name == tag_name)
        .options(selectinload(Tag.taggings).selectinload(Tagging.post))
    )


def sample(session: Session) -> None:
    dynamodb, python = Tag(tag_name="dynamodb"), Tag(tag_name="python")
    session.add_all(
        [
            User(username="alice", name="Alice", email="alice@example.com"),
            User(username="bob", name="Bob", email="bob@example.com"),
            Post(username="alice", post_id="p1", title="Single tables", published=True, tags=[dynamodb]),
            Post(username="alice", post_id="p2", title="Drafts", published=False, tags=[python]),
            Post(username="bob", post_id="p3", title="SQLAlchemy", published=True, tags=[dynamodb, python]),
            Comment(post_id="p1", comment_id="c1", username="bob", content="Nice"),
            Comment(post_id="p1", comment_id="c2", username="alice", content="Thanks"),
            Comment(post_id="p3", comment_id="c3", username="bob", content="More soon"),
        ]
    )
    session.commit()


def main() -> None:
    engine = create_engine("dynamodb+local://", dynamodb_scan="error")
    Base.metadata.create_all(engine)
    try:
        with Session(engine) as session:
            sample(session)
            alice = user(session, "alice")
            print("alice's posts:", [p.title for p in alice.posts])
            print("published:", [p.title for p in session.scalars(published_posts())])
            first = post(session, "alice", "p1")
            print("comments on p1:", [c.content for c in first.comments])
            print("bob's comments:", [c.content for c in session.scalars(comments_by("bob"))])
            print("tags of p3:", [t.tag_name for t in post(session, "bob", "p3").tags])
            dynamodb = session.scalars(tag_with_posts("dynamodb")).one()
            print("tagged dynamodb:", [p.title for p in dynamodb.posts])
            dynamodb.posts.remove(first)
            session.commit()
            print(
                "after untagging p1:",
                [p.title for p in session.scalars(tag_with_posts("dynamodb")).one().posts],
            )
    finally:
        Base.metadata.drop_all(engine)


if __name__ == "__main__":
    main()
