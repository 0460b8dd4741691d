"""Entry point for ``flask`` and WSGI servers: ``gunicorn app:app``."""

from reviewapp import create_app
from reviewapp.extensions import db

app = create_app()


@app.shell_context_processor
def shell_context() -> dict:
    from reviewapp import models

    return {"db": db, "models": models}
