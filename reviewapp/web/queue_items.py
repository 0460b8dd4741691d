"""Working a review queue's items (issue 16; split from ``queues`` in the queuewalk):
the reviewer's flow — "my next item" reserves an item and opens its run page (in the
queue's context), which renews the reservation while open; "Skip" (the holder's or an
assignee's) passes over it and says what became of it; "Next item" leaves it. Same
addresses under ``/queues`` as before. Thin: every rule is in
``services/review_queues.py``; service errors answer through ``web/errors.py``."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, flash, redirect, render_template, url_for
from flask_login import login_required

from ..domain.queues import ASSIGN_BY_HAND, ASSIGN_OPEN, ASSIGN_ROUND_ROBIN
from ..errors import Conflict
from ..extensions import db
from ..services import review_queues as rq
from ..services.queue_bar import HELD
from .auth import current_actor
from .forms import NextItemForm, int_or_none, validated

bp = Blueprint("queue_items", __name__, url_prefix="/queues")


NOT_ASSIGNED_YET = {  # the queue assigns its items and none is the reviewer's (yet)
    ASSIGN_BY_HAND: "Nothing is assigned to you in this queue yet: a lead assigns its items.",
    ASSIGN_ROUND_ROBIN: "Nothing is assigned to you in this queue yet: its runs are dealt "
                        "to its reviewers in turn as they enter.",
}
# ... said to a lead of the queue, who is the one to assign (new-user walk)
NOT_ASSIGNED_YET_LEAD = ("Nothing is assigned to you in this queue yet: you lead it, so assign "
                         "its items on the queue's page (under Queues).")


@bp.post("/next")
@login_required
def next_item() -> Response:
    """Reserve my next item (in ``queue``, or across my queues) and open its run page;
    ``skip`` ("Skip") or ``leaving`` ("Next item" on an item's page): release this item
    first and do not hand it back now — held and unrated, it would come first again."""
    form = validated(NextItemForm())
    actor = current_actor()
    queue_id = form.queue.data or None
    skip, leaving = int_or_none(form.skip.data), int_or_none(form.leaving.data)
    skipped = None
    if skip:  # only the holder, or an assignee (the service refuses anyone else)
        try:
            skipped = rq.skip(db.session, actor, skip)
        except Conflict as refused:
            db.session.rollback()
            flash("Nothing to skip: you do not hold this item and it is not waiting for you. "
                  "Use “Next item” for your next one.", "error")
            return redirect(url_for("runs.detail", run_pk=refused.details["run_pk"], item=skip,
                                    queue_id=queue_id), 303)
    elif leaving:
        rq.release(db.session, actor, leaving)
    item = rq.next_for_me(db.session, actor, queue_id, exclude=skip or leaving)
    if skipped:
        flash(_skipped_says(skipped, item is not None), "info")
    if item is None:
        flash(_nothing_left(actor, queue_id, skip or leaving), "info")
        return redirect(url_for("queue.next_run", mine="1"), 303)
    return redirect(url_for("runs.detail", run_pk=item.run_pk, item=item.id,
                            queue_id=queue_id), 303)


def _skipped_says(skipped: rq.Skipped, next_found: bool) -> str:
    """What "Skip" tells the reviewer (queuewalk: it said nothing): who may take the item
    now — it stays theirs (assigned to them), the queue's other reviewers (open queue),
    or its assignees — and, when one opened, that it is their next item."""
    if skipped.assigned:
        what = (f"it stays assigned to you and comes back after your other items in "
                f"“{skipped.queue_name}”")
    elif skipped.assignment == ASSIGN_OPEN:
        what = (f"it is free again for the other reviewers of “{skipped.queue_name}”, and "
                "comes back to you after your other items")
    else:
        what = "it is free again for the reviewers it is assigned to"
    return f"Item skipped: {what}." + (" Here is your next one." if next_found else "")


def _nothing_left(actor: Any, queue_id: Any, skipped: int | None) -> str:
    """What "Open my next item" says when nothing is left for the reviewer, from the
    service's count (``left_for_me``; new-user walk): a queue with no runs says so; a
    queue that assigns items and gave them none yet says so (to its lead: assign them);
    else why each item not complete yet (the page's count) is not theirs now — the one
    they just skipped (asking again hands it back), items waiting for a lead's assignment
    (for the actor's own, as their queue's lead: to assign on its page), for other
    reviewers."""
    left = rq.left_for_me(db.session, actor, queue_id, skipped)
    where = "in this queue" if queue_id else "in your queues"
    if not left.items:
        return f"Nothing to review {where} yet: {'it has' if queue_id else 'they have'} no runs."
    waiting = rq.waiting_for_assignment(db.session, actor, queue_id) if queue_id else None
    if waiting == ASSIGN_BY_HAND and int_or_none(queue_id) in {q for q, _, _ in rq.lead_queues(db.session, actor)}:
        return NOT_ASSIGNED_YET_LEAD
    if waiting:
        return NOT_ASSIGNED_YET[waiting]
    if not left.left:
        return f"Nothing left for you to review {where}: every item is complete."
    page = "the queue's page" if queue_id else "its queue's page"
    why = [(n, text) for n, text in (
        (left.to_assign, f"for you to assign {{}} on {page} (under Queues)"),
        (left.for_lead - left.to_assign, "for a lead to assign {}"),
        (left.for_others, "for other reviewers")) if n]
    if left.skipped:
        button = "“Review this queue”" if queue_id else "“Open my next item”"
        head = (f"Nothing else for you to review {where}: you skipped the one item left for "
                f"you, and {button} hands it back.")
        if not why:
            return head
        rest = _waiting(why, "other ")
        return f"{head} {rest[:1].upper()}{rest[1:]}."
    return f"Nothing left for you to review {where}: {_waiting(why, '')}."


def _waiting(why: list[tuple[int, str]], other: str) -> str:
    """"the 2 items not complete yet wait for other reviewers", or with several reasons
    "of the 4 items not complete yet, 2 wait for a lead to assign them, 1 waits for ...
    and 1 for other reviewers" (each ``text`` with ``{}`` for "it" / "them")."""
    def noun(n: int) -> str:
        return f"{n} {other}item{'s' if n != 1 else ''} not complete yet"

    def verb(n: int, text: str) -> str:
        return f"wait{'s' if n == 1 else ''} {text.format('it' if n == 1 else 'them')}"

    if len(why) == 1:
        (n, text), = why
        return f"the {noun(n)} {verb(n, text)}"
    parts = [f"{n} {verb(n, text)}" for n, text in why[:-1]]
    n, text = why[-1]
    return (f"of the {noun(sum(n for n, _ in why))}, {', '.join(parts)} and "
            f"{n} {text.format('it' if n == 1 else 'them')}")


@bp.post("/items/<int:item_id>/renew")
@login_required
def renew(item_id: int) -> str:
    """Renew my reservation (the run page polls this while open): the reservation
    fragment; when I no longer hold the item it says what the item bar says of it to me
    (``review_queues.item_bar``: who holds it until when, complete, disputed, my rating
    saved, assigned to me or to others, free to rate here) and the poll stops; the page
    also asks right after each saved rating. ``Forbidden`` for an item I cannot see."""
    actor = current_actor()
    try:
        bar = rq.BarState(HELD, until=rq.renew(db.session, actor, item_id))
    except Conflict:
        db.session.rollback()
        bar = rq.item_bar(db.session, actor, item_id)
    return render_template("queues/_reservation.html", item_id=item_id, bar=bar)
