"""The bare reference for benchmarks/ingest.py: plain Flask + SQLAlchemy Core, one JSON
parse and one INSERT per tool event, one commit per request. Same SQLite settings as
reviewapp (WAL, synchronous=NORMAL, busy_timeout, BEGIN IMMEDIATE for writes)."""

from __future__ import annotations

import json
import os

from flask import Flask, Response, request
from sqlalchemy import Column, Integer, MetaData, String, Table, Text, create_engine, event

metadata = MetaData()
events = Table(
    "tool_event", metadata,
    Column("pk", Integer, primary_key=True),
    Column("id", String(160)), Column("run_id", String(160)), Column("event", String(16)),
    Column("tool_name", String(200)), Column("body", Text),
)


def create_app() -> Flask:
    engine = create_engine(os.environ["REFERENCE_DATABASE_URL"])

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, record):  # noqa: ANN001
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "busy_timeout=15000", "foreign_keys=ON"):
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn):  # noqa: ANN001
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    metadata.create_all(engine)
    app = Flask(__name__)

    @app.post("/api/ingest/tool-events")
    def ingest() -> Response:
        body = json.loads(request.get_data())
        items = body if isinstance(body, list) else [body]
        rows = [{"id": e.get("id"), "run_id": e.get("run_id"), "event": e.get("event"),
                 "tool_name": e.get("tool_name"), "body": json.dumps(e)} for e in items]
        with engine.begin() as conn:
            conn.execute(events.insert(), rows)
        return app.response_class(json.dumps({"inserted": len(rows)}), mimetype="application/json")

    return app


app = create_app()
