"""Pure, deterministic rules: standard library only, no Flask, no SQLAlchemy."""
