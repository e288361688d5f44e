"""Keeping a report true from the web app (issue 40), in a real browser: Debian's Chromium driven
by Playwright, `deep-research web` in its own process against the changing world's pages,
search and model on loopback.

A finished run's page re-checks its sources (with script off: a plain form), shows each claim's
state with the quote kept then and the new text's words, watches the question, shows a
version's change list (made by `deep-research watch --run-due`, as a system timer would), and
stops watching; axe-core on the page; the part's hostile text stays inert.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from pathlib import Path

import httpx
import pytest
from keeping_world import QUESTION, world_on
from test_web import browser  # noqa: F401  (the fixture: one Chromium for this module)

from web_harness import CHROMIUM, DESKTOP, SHOTS, WebServer, cli_command, serious_violations

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = playwright_api.expect
STEP = 90_000  # ms a page step may take on a busy 2-core machine
DONE = 120_000  # ms a run of the stand-ins may take
expect.set_options(timeout=STEP)
OPERATOR = ["--search", "tavily", "--fetch-pages", "1", "--set", "fetch_private_addresses=true"]


def new_page(chromium, script: bool = True):
    context = chromium.new_context(viewport=DESKTOP, locale="en-US", java_script_enabled=script)
    page = context.new_page()
    page.set_default_timeout(STEP)
    return page


def due_now(store: str, watch_id: str) -> None:
    """Time passes: the watch's next version is due (Playwright's loop owns this thread: the
    SQLite file is written directly)."""
    with contextlib.closing(sqlite3.connect(store)) as db, db:
        db.execute("UPDATE watches SET next_due = 0 WHERE watch_id = ?", (watch_id,))


def part_shot(part, name: str, folder: Path) -> None:
    """A screenshot of one part of a page, into the test's folder and the docs' when asked."""
    for where in (folder, *([Path(SHOTS)] if SHOTS else [])):
        part.screenshot(path=str(where / f"{name}.png"))


def claim_row(page, statement: str):
    """The re-check table's row of a claim."""
    return page.locator("section#keeping tr", has_text=statement)


def test_a_finished_run_is_rechecked_watched_and_its_change_list_shown_on_its_page(
    browser,  # noqa: F811 (the fixture imported above)
    tmp_path,
    monkeypatch: pytest.MonkeyPatch,
):
    from stand_ins.changing_world import zeta

    store = tmp_path / "store.sqlite"
    with world_on(monkeypatch, topics=2) as world:
        web = WebServer(store, tmp_path / "web.log", *OPERATOR).start()
        try:
            page = new_page(browser)
            page.goto(web.url)
            page.get_by_label("Question").fill(QUESTION)
            page.get_by_label(re.compile("^Quick")).check()
            page.get_by_role("button", name="Start research").click()
            page.wait_for_url(re.compile(r"/runs/web-"))
            run_id = re.search(r"/runs/(web-[0-9a-f]+)", page.url).group(1)
            expect(page.locator("#status-line")).to_have_text("Finished", timeout=DONE)

            bare = new_page(browser, script=False)  # the part is plain forms
            bare.goto(f"{web.url}/runs/{run_id}")
            asked = len(world.chat.chat_requests)
            bare.get_by_role("button", name="Re-check sources").click()
            expect(bare.locator("#recheck-summary")).to_contain_text("0 model calls")
            assert len(world.chat.chat_requests) == asked  # nothing changed: no model call
            expect(claim_row(bare, zeta(1)).first).to_contain_text("unchanged")

            world.pages.edit(1, "7302", "7340")
            bare.get_by_role("button", name="Re-check sources").click()
            row = claim_row(bare, zeta(1)).first
            expect(row).to_contain_text("quote gone")
            expect(row.locator("q").first).to_have_text(zeta(1))  # the quote when read
            expect(row).to_contain_text("7340")  # the new text's words
            expect(claim_row(bare, zeta(0)).first).to_contain_text("unchanged")

            page.reload()
            page.get_by_label("Every").fill("1m")
            page.get_by_role("button", name="Watch", exact=True).click()
            expect(page.locator("section#keeping .error")).to_contain_text("once an hour")
            page.get_by_label("Every").fill("1d")
            page.get_by_role("button", name="Watch", exact=True).click()
            expect(page.locator("#watch-line")).to_contain_text("every 1d")

            world.pages.edit(0, "7301", "7350")
            due_now(str(store), run_id)
            read = ["--set", "fetch_private_addresses=true"]
            said = cli_command(["watch", "--run-due", *read, "--checkpoint-db", str(store)])
            assert "1 versions made, 0 failed" in said
            page.reload()
            version = page.locator("article#version-2")
            expect(version).to_contain_text("Figures that changed")
            expect(version).to_contain_text("7301 → 7350")
            expect(version.get_by_role("link", name="Version 2")).to_have_attribute(
                "href", f"/runs/{run_id}-v2"
            )
            assert serious_violations(page, also=("region",)) == []
            part_shot(page.locator("section#keeping"), "change-list-desktop", tmp_path)

            page.get_by_role("button", name="Stop watching").click()
            expect(page.get_by_role("button", name="Watch", exact=True)).to_be_visible()
            expect(page.locator("article#version-2")).to_contain_text("7301 → 7350")  # it stays
            for action in ("recheck", "watch", "unwatch"):  # no page token: refused, nothing done
                forged = httpx.post(f"{web.url}/runs/{run_id}/{action}", data={"every": "1d"})
                assert forged.status_code == 403
            page.reload()
            expect(page.get_by_role("button", name="Watch", exact=True)).to_be_visible()
        finally:
            web.stop()
