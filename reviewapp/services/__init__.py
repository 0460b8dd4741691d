"""Use cases. Services take a SQLAlchemy session, an ``Actor`` and primitives, own every
rule (validation, access, transactions), commit once, and never import Flask (STYLE 3)."""
