"""The floor for an HTTP vote (``scriba bench``): a bare FastAPI app that does one
INSERT+COMMIT per request into a SQLite file set up as Scriba's store is (same journal
mode, same durability), served by uvicorn as ``scriba serve`` is. What an HTTP vote costs
above this is Scriba's own work. ``$SCRIBA_FLOOR_DB`` names the database."""

from __future__ import annotations

import os
from typing import Any

from fastapi import FastAPI
from sqlalchemy import JSON, Column, Integer, MetaData, Table

from scriba.store.database import make_engine

_engine = make_engine(os.environ.get("SCRIBA_FLOOR_DB", "sqlite:///floor.db"))
_rows = Table("rows", MetaData(), Column("id", Integer, primary_key=True),
              Column("payload", JSON))
_rows.metadata.create_all(_engine)
app = FastAPI()


@app.get("/")
def alive() -> dict[str, bool]:
    return {"ok": True}


@app.post("/insert")
def insert(body: dict[str, Any]) -> dict[str, bool]:
    with _engine.begin() as connection:
        connection.execute(_rows.insert(), {"payload": body})
    return {"ok": True}
