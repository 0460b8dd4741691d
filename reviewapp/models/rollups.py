"""The dashboard's roll-ups (SPEC 8, issue 18): counts per workspace and UTC day, kept by
the services as deltas on every write that changes a counted value
(``services/rollups.py``), so the dashboard reads a few hundred rows per day of its range
instead of every run and tool call. ``flask dashboard rebuild`` recomputes them."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import Date, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from ..extensions import db
from .base import UTCDateTime


class RunDayCount(db.Model):
    """Runs of one workspace and UTC day having one ``value`` of one ``dimension``
    (``dashboard_run_day``): ``kind``, ``status``, ``verdict`` (the run's ``feedback``),
    ``score_band`` (``"0"`` ... ``"9"``: evidence score 0-9 ... 90-100) and ``verifier``
    (``verifier_verdict``); ``""`` is "no value". Every run counts once per dimension, so
    the runs of a day are the sum over any one dimension."""

    __tablename__ = "dashboard_run_day"

    workspace_id: Mapped[int] = mapped_column(
        ForeignKey("workspace.id", ondelete="CASCADE"), primary_key=True)
    dimension: Mapped[str] = mapped_column(String(16), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    value: Mapped[str] = mapped_column(String(32), primary_key=True)
    runs: Mapped[int] = mapped_column(Integer, default=0)


class ToolDayCount(db.Model):
    """One tool's calls in the runs of one workspace and UTC day (``dashboard_tool_day``):
    ``calls`` and ``failed`` calls; the reviewers' ratings of those calls, ``rated`` and
    ``negative``, and ``disliked_calls``, the calls with at least one negative rating."""

    __tablename__ = "dashboard_tool_day"

    workspace_id: Mapped[int] = mapped_column(
        ForeignKey("workspace.id", ondelete="CASCADE"), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    tool_name: Mapped[str] = mapped_column(String(200), primary_key=True)
    calls: Mapped[int] = mapped_column(Integer, default=0)
    failed: Mapped[int] = mapped_column(Integer, default=0)
    rated: Mapped[int] = mapped_column(Integer, default=0)
    negative: Mapped[int] = mapped_column(Integer, default=0)
    disliked_calls: Mapped[int] = mapped_column(Integer, default=0)


class TriageDayCount(db.Model):
    """Triage items of one workspace in one ``state``, by the UTC ``day`` they were
    opened (``dashboard_triage_day``): the dashboard's backlog and per-state counts
    without reading the items (issue 18). An item counts once, in its current state."""

    __tablename__ = "dashboard_triage_day"

    workspace_id: Mapped[int] = mapped_column(
        ForeignKey("workspace.id", ondelete="CASCADE"), primary_key=True)
    state: Mapped[str] = mapped_column(String(16), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    items: Mapped[int] = mapped_column(Integer, default=0)


class RatedRunCount(db.Model):
    """The runs of one workspace that one user has rated, counted (``user_rated_runs``):
    ``runs`` the runs holding at least one rating of theirs, ``rateable_runs`` those of
    them that are rateable (``diagnosis_run.rateable``). The review queue's progress and
    the runs list's "reviewed by me" count read it instead of every rating of the user
    (issue 18); kept by the services (``services/rated_runs.py``), recomputed by ``flask
    dashboard rebuild``."""

    __tablename__ = "user_rated_runs"

    author_id: Mapped[int] = mapped_column(
        ForeignKey("user_account.id", ondelete="CASCADE"), primary_key=True)
    workspace_id: Mapped[int] = mapped_column(
        ForeignKey("workspace.id", ondelete="CASCADE"), primary_key=True)
    runs: Mapped[int] = mapped_column(Integer, default=0)
    rateable_runs: Mapped[int] = mapped_column(Integer, default=0)


class RatedRun(db.Model):
    """One run one user has rated (``rated_run``): a row while the run holds at least one
    rating of theirs (of any part), with the run's workspace and creation time copied
    (a run's ``created_at`` is set once, when it is stored, and never changes). Its
    index lists a user's rated runs of a workspace in the runs list's time order, so
    "reviewed by me" reads the page's rows from it instead of testing the workspace's
    runs newest first for a rating (issue 18). Kept by the services
    (``services/rated_runs.py``) with ``RatedRunCount``, recomputed by ``flask
    dashboard rebuild``."""

    __tablename__ = "rated_run"
    __table_args__ = (
        # A user's rated runs of one workspace in list order: "reviewed by me", newest
        # or oldest first (``rated_runs.list_order``).
        Index("ix_rated_run_author_workspace_created", "author_id", "workspace_id",
              "run_created_at", "run_pk"),
    )

    # The run first: a removed run's rows go by its key (the cascade), and a rating's
    # upkeep finds (run, author) by it.
    run_pk: Mapped[int] = mapped_column(
        ForeignKey("diagnosis_run.id", ondelete="CASCADE"), primary_key=True)
    author_id: Mapped[int] = mapped_column(
        ForeignKey("user_account.id", ondelete="CASCADE"), primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspace.id", ondelete="CASCADE"))
    run_created_at: Mapped[datetime] = mapped_column(UTCDateTime(), nullable=False)
