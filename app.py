"""Entry point for ``flask`` and WSGI servers: ``gunicorn app:app``."""

import gc

from reviewapp import create_app
from reviewapp.extensions import db

app = create_app()
# What the app built at start (modules, the ORM's mappings, compiled statements: ~150,000
# objects) lives as long as the process: the cyclic collector's full passes, which
# otherwise walk all of it (a few hundred ms under load, in the middle of some request),
# and its younger passes leave it alone.
gc.freeze()


@app.shell_context_processor
def shell_context() -> dict:
    from reviewapp import models

    return {"db": db, "models": models}
