"""``GET /api/health``: 200 while the database answers, 503 ``SYSTEM_UNAVAILABLE`` when it
does not, and 200 again once it is back."""

from __future__ import annotations

from sqlalchemy import event

from reviewapp.extensions import db


def test_health_answers_ok(client):
    response = client.get("/api/health")
    assert (response.status_code, response.get_json()) == (200, {"status": "ok"})


def test_health_is_503_while_the_database_fails_and_recovers(client):
    engine = db.engine
    dbapi = engine.dialect.loaded_dbapi
    seen = []

    def fail(conn, cursor, statement, *args):
        if statement.startswith("SELECT"):  # SQLite's own BEGIN goes through here too
            seen.append(statement)
            raise dbapi.OperationalError("server closed the connection unexpectedly")

    event.listen(engine, "before_cursor_execute", fail)
    try:
        response = client.get("/api/health")
    finally:
        event.remove(engine, "before_cursor_execute", fail)
    assert seen == ["SELECT 1"]
    assert response.status_code == 503
    assert response.get_json()["error"]["code"] == "SYSTEM_UNAVAILABLE"
    assert client.get("/api/health").status_code == 200
