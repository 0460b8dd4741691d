"""Review queues that fill themselves (issue 16 "Review queues"): a queue of a workspace
with the rule that fills it, and its items, each reserved by at most one reviewer at a
time. The rules live in ``services/review_queues.py``."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from ..domain.consensus import DEFAULT_DISPUTE_RULE, DISPUTE_RULES
from ..domain.queues import ASSIGNMENT_MODES, REVIEWER_SCOPES
from ..extensions import db
from .base import JSONType, TimestampMixin, UTCDateTime, enum_values


class ItemSource(str, enum.Enum):
    """Why a run is in a queue: the queue's rule matched it, or a lead added it."""

    RULE = "rule"
    MANUAL = "manual"


class ReviewQueue(TimestampMixin, db.Model):
    """A queue (``review_queue``). ``rule`` holds runs-list filter parameters in their
    query-string form (``RunFilters.as_params``, without workspace and sort);
    ``sample_percent`` (1-100) of the matching runs enter, chosen per run
    deterministically; ``reviewers_per_run`` (1-5) ratings complete an item;
    ``reservation_minutes`` how long opening an item holds it for one reviewer;
    ``reviewers``: who may review (``domain.queues.REVIEWER_SCOPES``: all reviewers of
    the workspace, or the named ones in ``review_queue_reviewer``); ``assignment``: how
    items reach them (``ASSIGNMENT_MODES``); ``dealt``: how many round-robin deals were
    made (where the next one starts); ``dispute_rule`` which split of N > 1 ratings
    needs a lead's decision (``domain/consensus.DISPUTE_RULES``)."""

    __tablename__ = "review_queue"
    __table_args__ = (
        UniqueConstraint("workspace_id", "name"),
        CheckConstraint("sample_percent BETWEEN 1 AND 100", name="sample_percent"),
        CheckConstraint("reviewers_per_run BETWEEN 1 AND 5", name="reviewers_per_run"),
        CheckConstraint("reservation_minutes BETWEEN 1 AND 240", name="reservation_minutes"),
        CheckConstraint(f"reviewers IN {tuple(REVIEWER_SCOPES)!r}", name="reviewers"),
        CheckConstraint(f"assignment IN {tuple(ASSIGNMENT_MODES)!r}", name="assignment"),
        CheckConstraint(f"dispute_rule IN {DISPUTE_RULES.sql_in()}", name="dispute_rule"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(120))
    rule: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    sample_percent: Mapped[int] = mapped_column(Integer, default=100)
    reviewers_per_run: Mapped[int] = mapped_column(Integer, default=1)
    blind: Mapped[bool] = mapped_column(Boolean, default=False)
    reservation_minutes: Mapped[int] = mapped_column(Integer, default=10)
    dispute_rule: Mapped[str] = mapped_column(String(16), default=DEFAULT_DISPUTE_RULE,
                                              server_default=DEFAULT_DISPUTE_RULE)
    created_by: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"), nullable=True)
    reviewers: Mapped[str] = mapped_column(String(16), default="all", server_default="all")
    assignment: Mapped[str] = mapped_column(String(16), default="open", server_default="open")
    dealt: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class QueueReviewer(TimestampMixin, db.Model):
    """A reviewer named on a queue (``review_queue_reviewer``): who may review it when
    its ``reviewers`` is ``named``, in ``position`` order for round-robin deals."""

    __tablename__ = "review_queue_reviewer"
    __table_args__ = (UniqueConstraint("queue_id", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    queue_id: Mapped[int] = mapped_column(ForeignKey("review_queue.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer, default=0)


class QueueFormerRater(TimestampMixin, db.Model):
    """A rating that keeps counting for a queue after its author stopped being one of the
    queue's reviewers (``review_queue_former_rater``): ``user_id`` rated run ``run_pk``'s
    answer while they counted for queue ``queue_id`` (named on it, or it was open to
    all) and then stopped (no longer named: a lead's edit, or they left the workspace;
    or the queue came to name its reviewers). Their rating of that run keeps counting
    towards its item (``services/queue_completion.counted_rating``); a rating they give
    afterwards does not. ``created_at`` (UTC): when they stopped counting."""

    __tablename__ = "review_queue_former_rater"
    __table_args__ = (UniqueConstraint("queue_id", "run_pk", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    queue_id: Mapped[int] = mapped_column(ForeignKey("review_queue.id", ondelete="CASCADE"))
    run_pk: Mapped[int] = mapped_column(ForeignKey("diagnosis_run.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"))


class QueueAssignment(TimestampMixin, db.Model):
    """An item assigned to a reviewer (``review_queue_assignment``): in an assigned
    queue, the reviewers whose next item it may be. ``assigned_by`` null: dealt
    round-robin."""

    __tablename__ = "review_queue_assignment"
    __table_args__ = (
        UniqueConstraint("item_id", "user_id"),
        Index("ix_review_queue_assignment_user", "user_id", "item_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("review_queue_item.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("user_account.id", ondelete="CASCADE"))
    assigned_by: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"), nullable=True)


class QueueItem(TimestampMixin, db.Model):
    """A run in a queue (``review_queue_item``), at most once (unique). ``source`` and
    ``created_at`` say why and since when it is there; ``reserved_by`` /
    ``reserved_until`` (UTC) the one reviewer who holds it until then.

    ``ratings_count``: how many different reviewers who count for the queue (all raters,
    or in a queue that names its reviewers only theirs,
    ``services/queue_completion.counted_rating``) have rated the run's answer-level
    target; ``completed_at`` (UTC): since when that count reaches the queue's
    ``reviewers_per_run`` (null while it does not). Both are kept by the services
    (``services/queue_completion.py``) whenever a rating is written or deleted, so "the
    next open item" is an index range (queue, completed_at null, id), not a count."""

    __tablename__ = "review_queue_item"
    __table_args__ = (
        UniqueConstraint("queue_id", "run_pk"),
        CheckConstraint(f"source IN {enum_values(ItemSource)!r}", name="source"),
        CheckConstraint("ratings_count >= 0", name="ratings_count"),
        Index("ix_review_queue_item_run", "run_pk"),
        Index("ix_review_queue_item_open", "queue_id", "completed_at", "id"),
        # ``queue_work.next_item``: the queue's open items in id order, and "the item I
        # hold" among my open items of the queue (a few), each one index range; partial,
        # so that PostgreSQL, which does not take ``completed_at IS NULL`` as an
        # equality, reads them in id order too (issue 18).
        Index("ix_review_queue_item_todo", "queue_id", "id",
              sqlite_where=text("completed_at IS NULL"),
              postgresql_where=text("completed_at IS NULL")),
        Index("ix_review_queue_item_holder", "reserved_by", "queue_id", "id",
              sqlite_where=text("completed_at IS NULL"),
              postgresql_where=text("completed_at IS NULL")),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    queue_id: Mapped[int] = mapped_column(ForeignKey("review_queue.id", ondelete="CASCADE"))
    run_pk: Mapped[int] = mapped_column(ForeignKey("diagnosis_run.id", ondelete="CASCADE"))
    source: Mapped[str] = mapped_column(String(16), default=ItemSource.RULE.value)
    added_by: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"), nullable=True)
    reserved_by: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"), nullable=True)
    reserved_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    ratings_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class QueueRemoval(TimestampMixin, db.Model):
    """A run a lead removed from a queue (``review_queue_removal``): the queue's rule
    does not bring it back (``runs.queue_fill``); a lead adding it by hand lifts the
    record. ``created_at`` (UTC) is when it was removed, ``removed_by`` by whom."""

    __tablename__ = "review_queue_removal"
    __table_args__ = (UniqueConstraint("queue_id", "run_pk"),
                      Index("ix_review_queue_removal_run", "run_pk"))

    id: Mapped[int] = mapped_column(primary_key=True)
    queue_id: Mapped[int] = mapped_column(ForeignKey("review_queue.id", ondelete="CASCADE"))
    run_pk: Mapped[int] = mapped_column(ForeignKey("diagnosis_run.id", ondelete="CASCADE"))
    removed_by: Mapped[int | None] = mapped_column(
        ForeignKey("user_account.id", ondelete="SET NULL"), nullable=True)
