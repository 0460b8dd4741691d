"""Entry point for ``flask`` and WSGI servers: ``gunicorn app:app``."""

import gc

from reviewapp import create_app
from reviewapp.domain import encoded_text
from reviewapp.extensions import db

app = create_app()
# Redaction's per-character tables (every code point classified, about a second of CPU)
# are built here, once per process, instead of inside the first request that redacts
# non-ASCII text; before the freeze below, which then leaves them alone too.
encoded_text.build_tables()
# What the app built at start (modules, the ORM's mappings, compiled statements: ~150,000
# objects) lives as long as the process: the cyclic collector's full passes, which
# otherwise walk all of it (a few hundred ms under load, in the middle of some request),
# and its younger passes leave it alone.
gc.freeze()


@app.shell_context_processor
def shell_context() -> dict:
    from reviewapp import models

    return {"db": db, "models": models}
