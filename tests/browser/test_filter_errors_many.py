"""Several refused filters in a real browser (new-user walk, 2026-12-03: only the first bad
field was named, and after Filter the focus stayed on the button). Each refused field is
named in the list's place and marked where it is, and the first takes the focus, on the
htmx path and on a page opened at such an address. Chromium at 390 and 1280 px;
screenshots go to test-output/screenshots/filters-many-*.png."""

from __future__ import annotations

import pytest

from reviewapp.actors import Role

from .conftest import SCREENSHOTS, log_in

pytestmark = pytest.mark.browser

FOCUSED_ID = "() => document.activeElement && document.activeElement.id"


def _shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"filters-many-{name}.png"), full_page=True)


@pytest.mark.parametrize("width,height", [(390, 844), (1280, 900)])
def test_triage_names_every_refused_filter_and_focuses_the_first(new_page, make, width, height):
    ws = make.workspace()
    make.user(ws, Role.LEAD, username="lena")
    items = [make.triage_item(make.run(ws, query=f"Why is checkout-service returning 502s {i}?")) for i in range(2)]
    page = new_page(width, height)
    log_in(page, "lena")
    page.goto("/triage/")
    page.locator("#f-smin").fill("80")
    page.locator("#f-smax").fill("10")
    page.locator("#f-from").fill("2026-11-30")
    page.locator("#f-to").fill("2026-11-01")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_selector("#triage-table p.error")
    page.wait_for_function(f"() => ({FOCUSED_ID})() === 'f-smax'")
    _shot(page, f"triage-{width}")
    summary = " ".join(page.locator("#triage-table p.error").inner_text().split())
    assert summary == ("Some filters are not valid; fix the fields marked above: Score to: must not be below "
                       "the minimum score; Opened from: must not be after the end day.")
    marked = page.eval_on_selector_all("[aria-invalid=true]", "els => els.map(e => e.id)")
    assert marked == ["f-smax", "f-from"]
    assert page.locator("#f-smin").input_value() == "80" and page.locator("#f-to").input_value() == "2026-11-01"
    assert page.locator("#messages").inner_text().strip() == ""
    assert page.locator("[id^=triage-row-]").count() == 0 and "match" not in page.locator("main").inner_text()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    # Both fixed: the rows come back, unmarked.
    page.locator("#f-smin").fill("")
    page.locator("#f-to").fill("")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_selector(f"#triage-row-{items[0].id}")
    assert page.eval_on_selector_all("[aria-invalid=true]", "els => els.length") == 0


def test_triage_opened_at_an_unknown_assignee_focuses_that_field(new_page, make):
    ws = make.workspace()
    make.user(ws, Role.LEAD, username="lena")
    make.triage_item(make.run(ws))
    page = new_page(1280, 900)
    log_in(page, "lena")
    page.goto("/triage/?assignee=999999&score_min=80&score_max=10")
    page.wait_for_function(f"() => ({FOCUSED_ID})() === 'f-assignee'")
    _shot(page, "triage-assignee-1280")
    summary = " ".join(page.locator("#triage-table p.error").inner_text().split())
    assert summary == ("Some filters are not valid; fix the fields marked above: Assignee: must be someone "
                       "items can be assigned to; Score to: must not be below the minimum score.")


@pytest.mark.parametrize("width", [390, 1280])
def test_runs_list_names_every_refused_filter_and_focuses_the_first(new_page, make, width):
    ws = make.workspace(slug="scores")
    make.user(ws, username="sam.score")
    make.run(ws, query="First run")
    page = new_page(width=width, height=900)
    log_in(page, "sam.score")
    page.goto("/")
    if width < 600:
        page.click("label[for=filters-toggle]")
    page.locator("input[name=score_min]").fill("150")
    page.locator("input[name=score_min]").press("Tab")  # asks at once; the focus goes on
    page.wait_for_selector("#runs-table p.error")
    assert page.evaluate(FOCUSED_ID) == "score_max"
    page.locator("input[name=score_max]").fill("-1")
    page.locator("input[name=score_max]").press("Enter")  # submits: the first refused field
    page.wait_for_function("() => document.querySelectorAll('#filter-grid [aria-invalid=true]').length === 2")
    page.wait_for_function(f"() => ({FOCUSED_ID})() === 'score_min'")
    _shot(page, f"runs-{width}")
    summary = " ".join(page.locator("#runs-table p.error").inner_text().split())
    assert summary == ("Some filters are not valid; fix the fields marked above: Score from: must be between 0 "
                       "and 100; Score to: must be between 0 and 100.")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width


def test_runs_search_typed_while_a_filter_is_refused_keeps_the_focus(new_page, make):
    """The runs list asks as one types in the search: with a refused filter still there,
    each answer is a refusal, and it must not pull the focus out of the search box."""
    ws = make.workspace(slug="scores")
    make.user(ws, username="sam.score")
    make.run(ws, query="First run")
    page = new_page(1280, 900)
    log_in(page, "sam.score")
    page.goto("/?score_min=80&score_max=10")
    page.wait_for_function(f"() => ({FOCUSED_ID})() === 'score_max'")
    page.locator("#q").click()
    with page.expect_response(lambda r: "q=disk" in r.url and r.status == 400):
        page.locator("#q").press_sequentially("disk", delay=30)
    page.wait_for_timeout(300)  # the swap and its settle (htmx focuses autofocus on settle)
    assert page.evaluate(FOCUSED_ID) == "q"
