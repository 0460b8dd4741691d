"""Tenant-scoped select builders and dialect-specific statements (STYLE 7.4).

Every lookup of a workspace-owned object goes through here, so the membership check
lives in the same query as the target: a missing object and a foreign one both come back
as ``None`` and the service raises one ``Forbidden`` for both (SPEC 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from sqlalchemy import (
    Boolean,
    Select,
    String,
    and_,
    bindparam,
    exists,
    func,
    literal,
    literal_column,
    or_,
    select,
    type_coerce,
    union_all,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.orm import Session
from sqlalchemy.sql.functions import FunctionElement

from .actors import Actor, Role
from .errors import Conflict
from .models import Case, Feedback, Membership, Run, TargetRevision, TriageItem, Workspace

T = TypeVar("T", bound=tuple[Any, ...])


def role_in(column: Any, roles: Sequence[str]) -> Any:
    """``column IN (roles)`` with one bound parameter per role: ``IN (?, ?, ?)``. An IN
    over a Python sequence is an "expanding" parameter, whose SQL SQLAlchemy renders
    again at every execution (about 30 us of CPU each time, on every scoped statement;
    issue 18); the roles are a fixed list, so fixed placeholders give the same rows."""
    return column.in_([literal(role) for role in roles])


def scope_to_actor(stmt: Select[T], actor: Actor, workspace_col: Any, min_role: Role) -> Select[T]:
    """Restrict ``stmt`` to rows whose ``workspace_col`` the actor may use with ``min_role``.

    Users: a correlated EXISTS on their membership with a sufficient role. Tokens: their
    own workspace only (tokens have ingest rights, no role). System: unrestricted.
    """
    if actor.system:
        return stmt
    if actor.is_token:
        return stmt.where(workspace_col == actor.token_workspace_id)
    if actor.is_user:
        return stmt.where(
            exists().where(
                and_(
                    Membership.workspace_id == workspace_col,
                    Membership.user_id == actor.user_id,
                    role_in(Membership.role, min_role.at_least()),
                )
            )
        )
    return stmt.where(False)  # an empty actor sees nothing


def scope_to_member(
    stmt: Select[T], workspace_col: Any, min_role: Role, param: str = "actor_user_id"
) -> Select[T]:
    """``scope_to_actor`` for a user whose id is the bound parameter ``:actor_user_id``.

    The statement can then be built once and executed many times (its compiled form and
    cache key are reused); execute it with ``{"actor_user_id": actor.user_id, ...}``.
    """
    return stmt.where(
        exists().where(
            and_(
                Membership.workspace_id == workspace_col,
                Membership.user_id == bindparam(param),
                role_in(Membership.role, min_role.at_least()),
            )
        )
    )


def get_run_for(
    session: Session, actor: Actor, run_pk: int, min_role: Role = Role.REVIEWER
) -> Run | None:
    """The run with internal id ``run_pk`` if the actor may see it, else ``None``."""
    stmt = scope_to_actor(select(Run).where(Run.id == run_pk), actor, Run.workspace_id, min_role)
    return session.scalars(stmt).one_or_none()


def get_run_by_external_id_for(
    session: Session, actor: Actor, run_id: str, min_role: Role = Role.REVIEWER
) -> Run | None:
    """The visible run whose agent ``run_id`` matches, else ``None``.

    ``run_id`` is unique per workspace. When the actor sees several workspaces holding the
    same id the answer would be a guess: ``Conflict`` (409) naming ``run_id`` and listing
    the workspaces' slugs in ``details`` (use the run page, whose address is unambiguous).
    """
    stmt = scope_to_actor(
        select(Run).where(Run.run_id == run_id), actor, Run.workspace_id, min_role
    ).order_by(Run.created_at.desc(), Run.id.desc()).limit(2)
    found = list(session.scalars(stmt))
    if len(found) > 1:
        slugs = sorted(session.scalars(select(Workspace.slug).where(
            Workspace.id.in_([run.workspace_id for run in found]))))
        raise Conflict(f"run_id: '{run_id}' exists in more than one of your workspaces "
                       f"({', '.join(slugs)}); open the run from its workspace's list",
                       details={"run_id": run_id, "workspaces": slugs})
    return found[0] if found else None


def runs_visible_to(actor: Actor, min_role: Role = Role.REVIEWER) -> Select[tuple[Run]]:
    """``select(Run)`` restricted to the actor's workspaces."""
    return scope_to_actor(select(Run), actor, Run.workspace_id, min_role)


def runs_of_workspace_visible_to(
    actor: Actor, workspace_id: int, min_role: Role = Role.REVIEWER
) -> Select[tuple[Run]]:
    """``select(Run)`` of one workspace, empty unless the actor may see it.

    The membership check is a constant EXISTS (not correlated with each run), so the
    database checks it once instead of once per row: what keeps counting and paging a
    workspace of a million runs cheap.
    """
    return scope_to_actor(
        select(Run).where(Run.workspace_id == workspace_id), actor,
        literal(workspace_id), min_role,
    )


def workspaces_visible_to(actor: Actor, min_role: Role = Role.REVIEWER) -> Select[tuple[Workspace]]:
    """``select(Workspace)`` restricted to the actor's memberships."""
    return scope_to_actor(select(Workspace), actor, Workspace.id, min_role).order_by(Workspace.name)


def insert_for(session: Session, table: Any) -> Any:
    """A dialect-specific ``INSERT`` that supports ``on_conflict_do_update/nothing``."""
    if session.get_bind().dialect.name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


def triage_items_visible_to(actor: Actor, min_role: Role = Role.LEAD) -> Select[tuple[TriageItem]]:
    """``select(TriageItem)`` restricted to workspaces where the actor is at least ``min_role``."""
    return scope_to_actor(select(TriageItem), actor, TriageItem.workspace_id, min_role)


def get_triage_item_for(
    session: Session, actor: Actor, item_id: int, min_role: Role = Role.LEAD
) -> TriageItem | None:
    """The triage item ``item_id`` if the actor is at least ``min_role`` in its workspace."""
    stmt = triage_items_visible_to(actor, min_role).where(TriageItem.id == item_id)
    return session.scalars(stmt).one_or_none()


def get_case_for(
    session: Session, actor: Actor, case_id: str, min_role: Role = Role.REVIEWER
) -> Case | None:
    """The case ``case_id`` if the actor is at least ``min_role`` in its workspace."""
    stmt = scope_to_actor(
        select(Case).where(Case.case_id == case_id), actor, Case.workspace_id, min_role
    )
    return session.scalars(stmt).one_or_none()


def utc_day(session: Session, column: Any) -> Any:
    """A SQL expression for the UTC calendar day (``YYYY-MM-DD``) of a timestamp column.

    SQLite keeps UTC text (``date()`` reads it as is); PostgreSQL keeps ``timestamptz``,
    converted to UTC first so the day does not depend on the server's time zone."""
    if session.get_bind().dialect.name == "postgresql":
        return func.to_char(func.timezone("UTC", column), "YYYY-MM-DD")
    return func.date(column)


def iso_utc(session: Session, column: Any) -> Any:
    """A SQL expression rendering a UTC timestamp column as ISO 8601 text with microseconds
    and offset, ``2026-11-30T13:51:08.979227+00:00``, the same on both databases, labelled
    with the column's name. Exports use it so millions of rows need no per-row conversion
    in Python. SQLite keeps exactly this text with a space for the ``T`` (UTC, always six
    fraction digits when the ORM wrote the value, see ``models.base.UTCDateTime``)."""
    if session.get_bind().dialect.name == "postgresql":
        text = func.to_char(func.timezone("UTC", column), 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"')
    else:
        text = type_coerce(func.replace(column, " ", "T"), String).concat("+00:00")
    return type_coerce(text, String).label(column.key)


def keyset_after(keys: Sequence[tuple[Any, bool]], values: Sequence[Any], *,
                 reverse: bool = False) -> Any:
    """The WHERE clause "row comes after ``values``" for an ORDER BY over ``keys``.

    ``keys`` are (column expression, descending) pairs, the last one unique (the id) so
    rows sharing every other value (e.g. equal timestamps) are neither skipped nor
    repeated. ``reverse=True`` gives "row comes before" (the previous neighbour).
    Expressions must not be NULL (wrap nullable columns in ``coalesce``).
    """
    clauses = []
    for i, (column, descending) in enumerate(keys):
        later = descending != reverse  # "after" means smaller for a descending key
        compare = column < values[i] if later else column > values[i]
        equal = [keys[j][0] == values[j] for j in range(i)]
        clauses.append(and_(*equal, compare) if equal else compare)
    if len(keys) == 1:
        return clauses[0]
    # The first key's own bound, implied by the OR below, stated on its own: a range
    # both databases seek to in an index (an OR alone is a filter, so a cursor deep in
    # a million runs walked every row before it; issue 18).
    first, descending = keys[0]
    bound = first <= values[0] if descending != reverse else first >= values[0]
    return and_(bound, or_(*clauses))


def capped_count(session: Session, stmt: Select[Any] | Sequence[Select[Any]],
                 cap: int) -> tuple[int, bool]:
    """Count the rows of ``stmt`` up to ``cap``: (count, True) when there are more.

    The cost stays bounded on huge tables (the page says "10,000+"), which is what keeps
    the runs list as fast with a million runs as with ten thousand. ``stmt`` may be
    several statements over disjoint rows (one per workspace): each is read up to the
    cap, then the union is counted up to the cap (one query either way).
    """
    stmts = [stmt] if isinstance(stmt, Select) else list(stmt)
    limited = [
        s.with_only_columns(literal_column("1").label("one"), maintain_column_froms=True)
        .order_by(None)
        .limit(cap + 1)
        for s in stmts
    ]
    if len(limited) == 1:
        source = limited[0].subquery()
    else:
        arms = [select(arm.c.one) for arm in (s.subquery() for s in limited)]
        merged = union_all(*arms).subquery()
        source = select(merged.c.one).limit(cap + 1).subquery()
    found = session.scalar(select(func.count()).select_from(source)) or 0
    return (cap, True) if found > cap else (int(found), False)


def self_evaluation_key_update(
    session: Session, key: str, *, remove: bool = False, columns: tuple[str, ...] = ()
) -> Any:
    """``UPDATE diagnosis_run`` that sets (or, ``remove``, deletes) ONE key of
    ``self_evaluation`` in the database itself, so concurrent writers of other keys are
    never overwritten (SPEC 5): PostgreSQL ``jsonb ||`` / ``jsonb - key``, SQLite
    ``json_set`` / ``json_remove``, on the row's current value. A NULL or non-object
    value counts as ``{}``.

    Bind parameters: ``run_pk`` (``diagnosis_run.id``), ``value`` (a JSON-able mapping;
    not used with ``remove``), and ``col_<name>`` for each name in ``columns`` (plain
    columns of ``diagnosis_run`` updated in the same statement, e.g. ``evidence_score``).
    Works with one parameter dict or a list (executemany). ``key`` must come from the
    caller's allow-list (it is inlined as a literal path on SQLite).
    """
    from sqlalchemy import Text, bindparam, case, cast, func, literal, update
    from sqlalchemy.dialects.postgresql import JSONB

    if not key.isidentifier():
        raise ValueError(f"not a self_evaluation key: {key!r}")
    table = Run.__table__
    col = table.c.self_evaluation
    if session.get_bind().dialect.name == "postgresql":
        base = case((func.jsonb_typeof(col) == "object", col), else_=cast(literal("{}"), JSONB))
        name = cast(literal(key), Text)
        if remove:
            new_value = base.op("-")(name)
        else:
            new_value = base.op("||")(
                func.jsonb_build_object(name, cast(bindparam("value", type_=JSONB), JSONB)))
    else:
        base = case((func.json_type(col) == "object", col), else_=literal("{}"))
        path = literal(f'$."{key}"')
        if remove:
            new_value = func.json_remove(base, path)
        else:
            new_value = func.json_set(base, path, func.json(bindparam("value", type_=col.type)))
    values: dict[str, Any] = {"self_evaluation": new_value}
    values.update({c: bindparam(f"col_{c}") for c in columns})
    return update(table).where(table.c.id == bindparam("run_pk")).values(**values)


def on_earlier_version(feedback: Any = Feedback) -> Any:
    """SQL condition: the rating ``feedback`` (the ``Feedback`` model or an alias) was last
    submitted before its target's text changed (a ``TargetRevision`` newer than its
    ``updated_at``): it was "given on an earlier version" (SPEC 10)."""
    return select(TargetRevision.id).where(
        TargetRevision.target_type == feedback.target_type,
        TargetRevision.target_id == feedback.target_id,
        TargetRevision.created_at > feedback.updated_at,
    ).exists()


def lock_run(session: Session, run_pk: int) -> bool:
    """PostgreSQL: lock the run row (``FOR NO KEY UPDATE``) before a write to it or its
    children (a rating, a lead's decision), the lock every writer of the run takes first
    (``runs.upsert_run``, tool events): a re-ingest then either sees a rating and keeps
    its target, or has removed the target before the rating is written; two decisions
    on one run take turns. Returns whether it locked (SQLite
    needs no row lock: its writers are serialised by ``BEGIN IMMEDIATE``)."""
    if session.get_bind().dialect.name != "postgresql":
        return False
    session.execute(select(Run.id).where(Run.id == run_pk).with_for_update(key_share=True))
    return True


class HoldsText(FunctionElement[bool]):
    """SQL: ``text`` holds ``part`` as a substring (``instr(text, part) > 0`` on SQLite,
    ``strpos(text, part) > 0`` on PostgreSQL); NULL for a NULL text. Unlike ``LIKE
    '%part%'`` it needs no escaping, and PostgreSQL estimates it with its default
    selectivity instead of a pattern's few rows: a filtered list under ORDER BY ... LIMIT
    then walks its ordered index and stops at the page, where a "rare" pattern estimate
    made it fetch and sort every row of the workspace (issue 18, cases search)."""

    inherit_cache = True
    type = Boolean()

    def __init__(self, text: Any, part: Any) -> None:
        super().__init__(text, literal(part) if isinstance(part, str) else part)


@compiles(HoldsText, "sqlite")
def _holds_text_sqlite(element: HoldsText, compiler: Any, **kw: Any) -> str:
    text, part = element.clauses
    return f"(instr({compiler.process(text, **kw)}, {compiler.process(part, **kw)}) > 0)"


@compiles(HoldsText, "postgresql")
def _holds_text_postgresql(element: HoldsText, compiler: Any, **kw: Any) -> str:
    text, part = element.clauses
    return f"(strpos({compiler.process(text, **kw)}, {compiler.process(part, **kw)}) > 0)"

