"""Flask-SQLAlchemy's quickstart (issue 31), written here after its pages: a User with a unique
username and email on ``db.Model``, created, listed, paged with ``db.paginate``, shown with
``get_or_404`` and deleted, through Flask's test client. The app runs once on SQLite and once on
an in-memory ``dynamodb+local://`` of its own, and each request's answer is compared."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask import Flask, request
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


db = SQLAlchemy(model_class=Base)


class User(db.Model):
    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(unique=True)
    email: Mapped[str] = mapped_column(unique=True)


def by_username():
    # The list is ordered by username over the whole table: a Scan sorted on the client, bounded.
    return db.select(User).order_by(User.username).execution_options(dynamodb_client_sort=1000)


def public(user: User) -> dict:
    return {"id": user.id, "username": user.username, "email": user.email}


def create_app(uri: str, **engine_options) -> Flask:
    app = Flask(__name__)
    app.config.update(SQLALCHEMY_DATABASE_URI=uri, SQLALCHEMY_ENGINE_OPTIONS=engine_options, TESTING=True)
    db.init_app(app)

    @app.get("/users")
    def user_list():
        return [public(u) for u in db.session.execute(by_username()).scalars()]

    @app.get("/users/page/<int:page>")
    def user_page(page: int):
        paged = db.paginate(by_username(), page=page, per_page=2, error_out=False)
        return {"total": paged.total, "pages": paged.pages, "items": [public(u) for u in paged.items]}

    @app.post("/users/create")
    def user_create():
        user = User(username=request.form["username"], email=request.form["email"])
        db.session.add(user)
        try:
            db.session.commit()
        except IntegrityError:
            db.session.rollback()
            return {"error": "taken"}, 409
        return public(user), 201

    @app.get("/user/<int:id>")
    def user_detail(id: int):
        return public(db.get_or_404(User, id))

    @app.post("/user/<int:id>/delete")
    def user_delete(id: int):
        db.session.delete(db.get_or_404(User, id))
        db.session.commit()
        return {"ok": True}

    with app.app_context():
        db.create_all()
    return app


def visit(app: Flask) -> Iterator[tuple[str, int, object]]:
    """The quickstart's requests in order, each yielding its status and body (ids as the app gave them)."""
    client = app.test_client()
    ids = {}

    def answer(step: str, response) -> tuple[str, int, object]:
        return step, response.status_code, response.get_json()

    for name in ("linus", "ada", "grace", "barbara", "edsger"):
        response = client.post("/users/create", data={"username": name, "email": f"{name}@example.com"})
        ids[name] = response.get_json()["id"]
        yield (
            "create " + name,
            response.status_code,
            {k: v for k, v in response.get_json().items() if k != "id"},
        )
    yield "ids distinct", 0, len(set(ids.values())) == 5
    yield answer(
        "duplicate username", client.post("/users/create", data={"username": "ada", "email": "x@example.com"})
    )
    yield answer(
        "duplicate email", client.post("/users/create", data={"username": "x", "email": "ada@example.com"})
    )
    yield "list", 200, [u["username"] for u in client.get("/users").get_json()]
    for page in (1, 2, 3, 4):
        response = client.get(f"/users/page/{page}")
        body = response.get_json()
        yield (
            f"page {page}",
            response.status_code,
            (body["total"], body["pages"], [u["username"] for u in body["items"]]),
        )
    detail = client.get(f"/user/{ids['grace']}")
    yield "detail", detail.status_code, detail.get_json()["username"]
    yield answer("detail missing", client.get(f"/user/{max(ids.values()) + 1000}"))
    yield answer("delete", client.post(f"/user/{ids['grace']}/delete"))
    yield answer("delete again", client.post(f"/user/{ids['grace']}/delete"))
    yield "list after delete", 200, [u["username"] for u in client.get("/users").get_json()]
    # The freed username can be taken again.
    again = client.post("/users/create", data={"username": "grace", "email": "grace@example.com"})
    yield "create grace again", again.status_code, again.get_json()["username"]


@pytest.fixture
def apps(endpoint_url: str) -> Iterator[tuple[Flask, Flask]]:
    apps = create_app("sqlite://"), create_app("dynamodb+local://", dynamodb_scan="allow")
    yield apps
    for app in apps:
        with app.app_context():
            db.drop_all()
            db.engine.dispose()


def test_every_request_gives_sqlites_answer(apps) -> None:
    sqlite, dynamo = apps
    for expected, got in zip(visit(sqlite), visit(dynamo), strict=True):
        assert got == expected
