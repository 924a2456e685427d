"""The three users of SQLAlchemy's ORM quick start, for any User/Address mapping of its shape."""

from __future__ import annotations

from typing import Any


def quick_start_users(User: Any, Address: Any) -> list[Any]:
    """spongebob (one address), sandy (two) and patrick (none), ids 1 to 3, as the guide adds them."""
    spongebob = User(
        id=1,
        name="spongebob",
        fullname="Spongebob Squarepants",
        addresses=[Address(id=1, email_address="spongebob@sqlalchemy.org")],
    )
    sandy = User(
        id=2,
        name="sandy",
        fullname="Sandy Cheeks",
        addresses=[
            Address(id=2, email_address="sandy@sqlalchemy.org"),
            Address(id=3, email_address="sandy@squirrelpower.org"),
        ],
    )
    patrick = User(id=3, name="patrick", fullname="Patrick Star")
    return [spongebob, sandy, patrick]
