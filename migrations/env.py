import logging
from logging.config import fileConfig

from alembic import context
from flask import current_app

# this is the Alembic Config object, which provides
# access to the values within the .ini file in use.
config = context.config

# Interpret the config file for Python logging.
# This line sets up loggers basically.
# Keep the app's loggers alive when migrations run inside a process (tests, make run).
fileConfig(config.config_file_name, disable_existing_loggers=False)
logger = logging.getLogger('alembic.env')
# What `flask db upgrade` (and so `make run`) says: one short line for the person running
# it (alembic.ini: this logger prints the bare message; alembic's own per-step lines, which
# quote each migration's notes, are at WARN there: set [logger_alembic] to INFO to see them).
summary = logging.getLogger('reviewapp.migrations')


def get_engine():
    return current_app.extensions['migrate'].db.engine


def get_engine_url():
    try:
        return get_engine().url.render_as_string(hide_password=False).replace(
            '%', '%%')
    except AttributeError:
        return str(get_engine().url).replace('%', '%%')


# add your model's MetaData object here
# for 'autogenerate' support
# from myapp import mymodel
# target_metadata = mymodel.Base.metadata
config.set_main_option('sqlalchemy.url', get_engine_url())
target_db = current_app.extensions['migrate'].db

# other values from the config, defined by the needs of env.py,
# can be acquired:
# my_important_option = config.get_main_option("my_important_option")
# ... etc.


def get_metadata():
    if hasattr(target_db, 'metadatas'):
        return target_db.metadatas[None]
    return target_db.metadata


def run_migrations_offline():
    """Run migrations in 'offline' mode.

    This configures the context with just a URL
    and not an Engine, though an Engine is acceptable
    here as well.  By skipping the Engine creation
    we don't even need a DBAPI to be available.

    Calls to context.execute() here emit the given string to the
    script output.

    """
    url = config.get_main_option("sqlalchemy.url")
    context.configure(
        url=url, target_metadata=get_metadata(), literal_binds=True
    )

    with context.begin_transaction():
        context.run_migrations()


def render_item(type_, obj, autogen_context):
    """Render the app's column types as plain SQLAlchemy types, so migrations never
    import application code."""
    from reviewapp.models.base import UTCDateTime

    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    if type_ == "type" and type(obj).__name__ == "JSON" and getattr(obj, "_variant_mapping", None):
        autogen_context.imports.add("from sqlalchemy.dialects import postgresql")
        return "sa.JSON().with_variant(postgresql.JSONB(), 'postgresql')"
    return False


def include_name(name, type_, parent_names):
    """Autogenerate leaves the full-text index of run text alone: ``run_search`` (an
    FTS5 table and its shadow tables on SQLite, a table on PostgreSQL) is no model; its
    migrations create it by hand (reviewapp/search_index.py)."""
    return not (type_ == "table" and name is not None and name.startswith("run_search"))


def run_migrations_online():
    """Run migrations in 'online' mode.

    In this scenario we need to create an Engine
    and associate a connection with the context.

    """

    # this callback is used to prevent an auto-migration from being generated
    # when there are no changes to the schema
    # reference: http://alembic.zzzcomputing.com/en/latest/cookbook.html
    def process_revision_directives(context, revision, directives):
        if getattr(config.cmd_opts, 'autogenerate', False):
            script = directives[0]
            if script.upgrade_ops.is_empty():
                directives[:] = []
                logger.info('No changes in schema detected.')

    conf_args = current_app.extensions['migrate'].configure_args
    conf_args.setdefault("render_item", render_item)
    conf_args.setdefault("include_name", include_name)
    if conf_args.get("process_revision_directives") is None:
        conf_args["process_revision_directives"] = process_revision_directives

    applied = []  # this run's steps (True: upgrade), for the one line said at the end
    conf_args = {"on_version_apply": lambda step, **_: applied.append(step.is_upgrade), **conf_args}
    connectable = get_engine()

    with connectable.connect() as connection:
        # SQLite: batch mode rebuilds a table (copy, DROP, rename); with foreign keys
        # enforced, the DROP cascades (ON DELETE CASCADE) and silently empties every
        # child table (memberships, ratings ...). Foreign keys stay off while migrating
        # (set on the raw connection: PRAGMA foreign_keys is a no-op inside a
        # transaction), are checked afterwards, and are on again for the pool.
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            connection.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")
        try:
            context.configure(
                connection=connection,
                target_metadata=get_metadata(),
                **conf_args
            )

            with context.begin_transaction():
                context.run_migrations()
            _say_done(applied)
            if sqlite:
                broken = connection.connection.driver_connection.execute(
                    "PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise RuntimeError(f"foreign keys broken by the migration: {broken[:5]}")
        finally:
            if sqlite:
                connection.connection.driver_connection.execute("PRAGMA foreign_keys=ON")


def _say_done(applied):
    """One line on what the migration run did (``applied``: one bool per step, True for an
    upgrade): how many updates, or that there was nothing to do."""
    ups, downs = applied.count(True), applied.count(False)
    if not applied:
        summary.info("Database schema is up to date.")
    elif downs == 0:
        summary.info("Database schema updated (%d step%s).", ups, "" if ups == 1 else "s")
    else:
        summary.info("Database schema changed: %d step%s up, %d down.", ups, "" if ups == 1 else "s", downs)


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
