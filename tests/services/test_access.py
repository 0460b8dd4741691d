"""Roles and tenant scoping (SPEC 1, 2)."""

from __future__ import annotations

import pytest

from reviewapp.actors import Actor, Role
from reviewapp.errors import Forbidden
from reviewapp.queries import get_run_for
from reviewapp.services import access, runs


@pytest.mark.parametrize("held", list(Role))
@pytest.mark.parametrize("required", list(Role))
def test_require_role_follows_the_role_order(session, make, held, required):
    ws = make.workspace()
    user = make.user(ws, held)
    order = {Role.REVIEWER: 1, Role.LEAD: 2, Role.ADMIN: 3}
    if order[held] >= order[required]:
        access.require_role(session, make.actor(user), ws.id, required)
    else:
        with pytest.raises(Forbidden):
            access.require_role(session, make.actor(user), ws.id, required)


def test_membership_of_another_workspace_grants_nothing(session, make):
    a, b = make.workspace(), make.workspace()
    admin_of_a = make.user(a, Role.ADMIN)
    with pytest.raises(Forbidden):
        access.require_role(session, make.actor(admin_of_a), b.id, Role.REVIEWER)


def test_token_actor_is_confined_to_its_workspace(session, make):
    a, b = make.workspace(), make.workspace()
    token = Actor.for_token(1, a.id)
    access.require_role(session, token, a.id, Role.REVIEWER)
    with pytest.raises(Forbidden):
        access.require_role(session, token, b.id, Role.REVIEWER)
    with pytest.raises(Forbidden):
        access.require_role(session, token, a.id, Role.LEAD)


def test_user_of_a_sees_no_run_of_b(session, make):
    a, b = make.workspace(), make.workspace()
    run_a, run_b = make.run(a), make.run(b)
    user = make.user(a)
    actor = make.actor(user)
    assert get_run_for(session, actor, run_a.id).id == run_a.id
    assert get_run_for(session, actor, run_b.id) is None
    assert get_run_for(session, actor, 10_000_000) is None
    page = runs.list_runs(session, actor)
    assert [r.id for r in page.runs] == [run_a.id]
    assert page.total == 1


def test_runs_list_page_shows_only_own_workspace(client, make, login):
    a, b = make.workspace(), make.workspace()
    make.run(a, query="visible question in A")
    make.run(b, query="secret question in B")
    login(make.user(a))
    html = client.get("/").get_data(as_text=True)
    assert "visible question in A" in html
    assert "secret question in B" not in html


def test_keyset_pagination_neither_skips_nor_repeats(session, make):
    ws = make.workspace()
    created = [make.run(ws) for _ in range(7)]
    # Give every run the same timestamp: the id breaks the tie.
    stamp = created[0].created_at
    for run in created:
        run.created_at = stamp
    session.commit()
    actor = make.actor(make.user(ws))
    seen, cursor = [], None
    while True:
        page = runs.list_runs(session, actor, limit=3, cursor=cursor)
        seen.extend(r.id for r in page.runs)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == sorted((r.id for r in created), reverse=True)
