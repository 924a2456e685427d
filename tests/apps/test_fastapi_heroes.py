"""SQLModel's FastAPI heroes app (issue 31), written here after the tutorial, with its own test
cases through FastAPI's TestClient; the session dependency is overridden per engine, SQLite and an
in-memory ``dynamodb+local://`` of its own, and each case must pass on both."""

from collections.abc import Iterator
from typing import Annotated

import pytest
from fastapi import Depends, FastAPI, HTTPException, Query
from fastapi.testclient import TestClient
from sqlalchemy.pool import StaticPool
from sqlmodel import Field, Session, SQLModel, create_engine, select


class HeroBase(SQLModel):
    name: str = Field(index=True)
    secret_name: str
    age: int | None = Field(default=None, index=True)


class ApiHero(HeroBase, table=True):
    __tablename__ = "api_hero"
    id: int | None = Field(default=None, primary_key=True)


class HeroCreate(HeroBase):
    pass


class HeroPublic(HeroBase):
    id: int


class HeroUpdate(SQLModel):
    name: str | None = None
    secret_name: str | None = None
    age: int | None = None


def get_session() -> Iterator[Session]:
    raise NotImplementedError("overridden per engine")


SessionDep = Annotated[Session, Depends(get_session)]
app = FastAPI()


@app.post("/heroes/", response_model=HeroPublic)
def create_hero(*, session: SessionDep, hero: HeroCreate):
    db_hero = ApiHero.model_validate(hero)
    session.add(db_hero)
    session.commit()
    session.refresh(db_hero)
    return db_hero


@app.get("/heroes/", response_model=list[HeroPublic])
def read_heroes(*, session: SessionDep, offset: int = 0, limit: Annotated[int, Query(le=100)] = 100):
    # The tutorial's select has no ORDER BY and SQLite answers in insertion order; a Scan's order is
    # DynamoDB's own, so both sides say which order they mean.
    return session.exec(select(ApiHero).order_by(ApiHero.id).offset(offset).limit(limit)).all()


@app.get("/heroes/{hero_id}", response_model=HeroPublic)
def read_hero(*, session: SessionDep, hero_id: int):
    hero = session.get(ApiHero, hero_id)
    if not hero:
        raise HTTPException(status_code=404, detail="Hero not found")
    return hero


@app.patch("/heroes/{hero_id}", response_model=HeroPublic)
def update_hero(*, session: SessionDep, hero_id: int, hero: HeroUpdate):
    db_hero = session.get(ApiHero, hero_id)
    if not db_hero:
        raise HTTPException(status_code=404, detail="Hero not found")
    db_hero.sqlmodel_update(hero.model_dump(exclude_unset=True))
    session.add(db_hero)
    session.commit()
    session.refresh(db_hero)
    return db_hero


@app.delete("/heroes/{hero_id}")
def delete_hero(*, session: SessionDep, hero_id: int):
    hero = session.get(ApiHero, hero_id)
    if not hero:
        raise HTTPException(status_code=404, detail="Hero not found")
    session.delete(hero)
    session.commit()
    return {"ok": True}


# The tutorial's SQLite engine (one connection, used from TestClient's thread) and its DynamoDB
# twin, whose list endpoint is a Scan sorted and skipped on the client (dynamodb_client_sort
# bounds the rows held), set once on the engine so the app's queries stay as written.
ENGINES = {
    "sqlite": lambda: create_engine(
        "sqlite://", connect_args={"check_same_thread": False}, poolclass=StaticPool
    ),
    "dynamodb": lambda: create_engine(
        "dynamodb+local://", execution_options={"dynamodb_scan": "allow", "dynamodb_client_sort": 1000}
    ),
}


@pytest.fixture(params=sorted(ENGINES))
def engine(request, endpoint_url: str):
    engine = ENGINES[request.param]()
    SQLModel.metadata.create_all(engine, tables=[ApiHero.__table__])
    yield engine
    SQLModel.metadata.drop_all(engine, tables=[ApiHero.__table__])
    engine.dispose()


@pytest.fixture
def session(engine) -> Iterator[Session]:
    with Session(engine) as session:
        yield session


@pytest.fixture
def client(session: Session) -> Iterator[TestClient]:
    app.dependency_overrides[get_session] = lambda: session
    yield TestClient(app)
    app.dependency_overrides.clear()


def test_create_hero(client: TestClient) -> None:
    response = client.post("/heroes/", json={"name": "Deadpond", "secret_name": "Dive Wilson"})
    data = response.json()
    assert response.status_code == 200
    assert data["name"] == "Deadpond"
    assert data["secret_name"] == "Dive Wilson"
    assert data["age"] is None
    assert data["id"] is not None


def test_create_hero_incomplete(client: TestClient) -> None:
    response = client.post("/heroes/", json={"name": "Deadpond"})
    assert response.status_code == 422


def test_create_hero_invalid(client: TestClient) -> None:
    response = client.post(
        "/heroes/",
        json={"name": "Deadpond", "secret_name": {"message": "Do you wanna know my secret identity?"}},
    )
    assert response.status_code == 422


def test_read_heroes(session: Session, client: TestClient) -> None:
    hero_1 = ApiHero(name="Deadpond", secret_name="Dive Wilson")
    hero_2 = ApiHero(name="Rusty-Man", secret_name="Tommy Sharp", age=48)
    session.add_all([hero_1, hero_2])
    session.commit()

    response = client.get("/heroes/")
    data = response.json()
    assert response.status_code == 200
    assert [(h["name"], h["secret_name"], h["age"], h["id"]) for h in data] == [
        ("Deadpond", "Dive Wilson", None, hero_1.id),
        ("Rusty-Man", "Tommy Sharp", 48, hero_2.id),
    ]


def test_read_heroes_offset_and_limit(session: Session, client: TestClient) -> None:
    session.add_all([ApiHero(name=f"Hero {n}", secret_name=f"Secret {n}", age=n) for n in range(5)])
    session.commit()

    response = client.get("/heroes/", params={"offset": 1, "limit": 2})
    assert response.status_code == 200
    assert [h["name"] for h in response.json()] == ["Hero 1", "Hero 2"]
    assert [h["name"] for h in client.get("/heroes/", params={"offset": 4}).json()] == ["Hero 4"]
    assert client.get("/heroes/", params={"limit": 101}).status_code == 422


def test_read_hero(session: Session, client: TestClient) -> None:
    hero_1 = ApiHero(name="Deadpond", secret_name="Dive Wilson")
    session.add(hero_1)
    session.commit()

    response = client.get(f"/heroes/{hero_1.id}")
    data = response.json()
    assert response.status_code == 200
    assert (data["name"], data["secret_name"], data["age"], data["id"]) == (
        "Deadpond",
        "Dive Wilson",
        None,
        hero_1.id,
    )
    assert client.get(f"/heroes/{hero_1.id + 1000}").status_code == 404


def test_update_hero(session: Session, client: TestClient) -> None:
    hero_1 = ApiHero(name="Deadpond", secret_name="Dive Wilson")
    session.add(hero_1)
    session.commit()

    response = client.patch(f"/heroes/{hero_1.id}", json={"name": "Deadpuddle"})
    data = response.json()
    assert response.status_code == 200
    assert (data["name"], data["secret_name"], data["age"], data["id"]) == (
        "Deadpuddle",
        "Dive Wilson",
        None,
        hero_1.id,
    )
    assert client.patch(f"/heroes/{hero_1.id + 1000}", json={"name": "Nobody"}).status_code == 404


def test_delete_hero(session: Session, client: TestClient) -> None:
    hero_1 = ApiHero(name="Deadpond", secret_name="Dive Wilson")
    session.add(hero_1)
    session.commit()

    response = client.delete(f"/heroes/{hero_1.id}")
    hero_in_db = session.get(ApiHero, hero_1.id)
    assert response.status_code == 200
    assert response.json() == {"ok": True}
    assert hero_in_db is None
    assert client.delete(f"/heroes/{hero_1.id}").status_code == 404
