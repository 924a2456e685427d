"""Many-to-many in one table: users and groups, one membership item per (user, group) in the
user's partition and, through an inverted index, in the group's; both sides reach the other
through association proxies."""

from __future__ import annotations

from types import SimpleNamespace

from sqlalchemy import Index
from sqlalchemy.ext.associationproxy import association_proxy
from sqlalchemy.orm import Mapped, mapped_column, relationship

import sa_dynamo


def membership_models(base: type, table: str) -> SimpleNamespace:
    """``Entity`` (the table's hierarchy on ``base``), ``User``, ``Group`` and ``Membership``."""

    class Entity(sa_dynamo.SingleTable, base):
        __tablename__ = table
        __table_args__ = (Index("inverted", "sk", "pk", dynamodb_projection="ALL"),)
        pk: Mapped[str] = mapped_column(primary_key=True)
        sk: Mapped[str] = mapped_column(primary_key=True)
        user_id: Mapped[str | None]
        group_id: Mapped[str | None]

    class User(Entity):
        __key_templates__ = {"pk": "USER#{user_id}", "sk": "USER#{user_id}"}
        name: Mapped[str | None]
        memberships: Mapped[list[Membership]] = relationship(
            primaryjoin="User.user_id == remote(foreign(Membership.user_id))",
            back_populates="user",
            cascade="all, delete-orphan",
        )
        groups = association_proxy("memberships", "group", creator=lambda group: Membership(group=group))

    class Group(Entity):
        __key_templates__ = {"pk": "GROUP#{group_id}", "sk": "GROUP#{group_id}"}
        title: Mapped[str | None]
        memberships: Mapped[list[Membership]] = relationship(
            primaryjoin="Group.group_id == remote(foreign(Membership.group_id))",
            back_populates="group",
            cascade="all, delete-orphan",
        )
        members = association_proxy("memberships", "user", creator=lambda user: Membership(user=user))

    class Membership(Entity):
        __key_templates__ = {"pk": "USER#{user_id}", "sk": "GROUP#{group_id}"}
        role: Mapped[str | None]
        user: Mapped[User] = relationship(
            primaryjoin="remote(User.user_id) == foreign(Membership.user_id)", back_populates="memberships"
        )
        group: Mapped[Group] = relationship(
            primaryjoin="remote(Group.group_id) == foreign(Membership.group_id)", back_populates="memberships"
        )

    return SimpleNamespace(Entity=Entity, User=User, Group=Group, Membership=Membership)
