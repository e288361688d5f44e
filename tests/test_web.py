"""`deep-research web` in a real browser: Debian's Chromium driven by Playwright, the server in its
own process against the model and search stand-ins. Skips only when Chromium is absent
(`.ci/browser.sh` installs it, and CI fails on a skip).

Ask → watch → read; a reload mid-run; Stop then Resume; a plan edited in the form and researched
as edited; source filters set in the form reaching the search and the report header, a bad
domain refused beside its field; the server SIGKILLed and started again under an open page;
hostile text inert; the keyboard alone; axe-core on every page; desktop and phone widths;
English and Chinese labels.

Most tests share one server and its stand-ins (made fresh for each test), each reading only the
runs it starts; a test that kills the server, counts the whole history or needs flags starts its
own.
"""

from __future__ import annotations

import json
import re

import pytest

from web_harness import (  # noqa: F401  (the fixtures: shared_*, fresh_stand_ins)
    CHROMIUM,
    DESKTOP,
    PHONE,
    STAND_IN_LATENCY,
    WebServer,
    cli_command,
    fresh_stand_ins,
    launch,
    serious_violations,
    shared_stand_ins,
    shared_web,
    shot,
)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")
playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = playwright_api.expect
STEP = 90_000  # ms a page step may take when a model on the same 2 cores takes them both
expect.set_options(timeout=STEP)
QUESTION = "Compare zstd and xz for log archives"
HOSTILE = (
    'zstd <img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>'
)
DONE = 120_000  # ms a run of the stand-ins may take on a busy 2-core machine


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the module's tests (each gets its own context)."""
    with playwright_api.sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def chat_server(stand_ins):
    """The module's model stand-in, fresh for the test."""
    return stand_ins[0]


@pytest.fixture
def search_server(stand_ins):
    """The module's search stand-in, fresh for the test."""
    return stand_ins[1]


@pytest.fixture
def web(request, stand_ins):
    """The module's web app, shared by the tests that need nothing of their own: each reads
    only the runs it starts."""
    return request.getfixturevalue("shared_web")


@pytest.fixture
def own_web(request, tmp_path, stand_ins):
    """The web app for one test (it kills it, lists the whole history, or has `web_flags`), on a
    free loopback port, its store in the test's folder."""
    mark = request.node.get_closest_marker("web_flags")
    flags = mark.args if mark else ()
    server = WebServer(tmp_path / "store.sqlite", tmp_path / "web.log", *flags).start()
    yield server
    server.stop()


def new_page(browser, viewport=DESKTOP, lang="en-US"):
    """A fresh page (no cookies) at a width, with a browser language."""
    context = browser.new_context(viewport=viewport, locale=lang, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(STEP)
    page.console_errors = []  # a CSP refusal or a missing file shows here
    page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))
    return page


def thread_of(page) -> str:
    """The run id from a run page's address."""
    found = re.search(r"/runs/(web-[0-9a-f]+)", page.url)
    assert found, page.url
    return found.group(1)


def ask(page, web, question=QUESTION, preset="Quick", approve=False, keep_form=False):
    """Fill the ask form as a person does and start the run; returns its thread id.
    `keep_form`: the page is the ask form already, with options chosen."""
    if not keep_form:
        page.goto(web.url)
    page.get_by_label("Question").fill(question)
    page.get_by_label(re.compile(f"^{preset}")).check()
    if approve:
        page.get_by_label("Review the plan first").check()
    page.get_by_role("button", name="Start research").click()
    try:
        page.wait_for_url(re.compile(r"/runs/web-"))
    except playwright_api.TimeoutError:  # say what the page says instead (a refused option?)
        raise AssertionError(
            f"no run page; the page says: {page.inner_text('main')[:1500]}"
        ) from None
    return thread_of(page)


BROKEN_WORDS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll("main th, main td")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.data.matchAll(/[A-Za-z]{2,}/g)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        if (range.getClientRects().length > 1) { broken.push(word[0]); }
      }
    }
  }
  return broken;
}"""


def no_word_broken(page) -> None:
    """No word in a table is split across lines ("Stat/us", "Finis/hed"): a table too wide for
    the screen scrolls in its own box instead."""
    assert page.evaluate(BROKEN_WORDS) == []


def no_serious_violations(page) -> None:
    """axe-core finds nothing serious or critical on the page, and no content outside a
    landmark."""
    assert serious_violations(page, also=("region",)) == []


def test_ask_watch_read_downloads_match_the_cli_export(browser, web, tmp_path, chat_server):
    page = new_page(browser)
    page.goto(web.url)
    no_serious_violations(page)
    shot(page, "ask-desktop", tmp_path)
    chat_server.latency = 0.3  # time to see the run being made
    thread_id = ask(page, web)
    status = page.locator("#status-line")
    expect(page.locator("#progress ol.workers > li").first).to_be_visible()  # streamed
    expect(page.locator("#progress h2").first).to_have_text("Plan")  # it leads
    no_serious_violations(page)
    shot(page, "run-live-desktop", tmp_path)
    chat_server.latency = STAND_IN_LATENCY
    expect(status).to_have_text("Finished", timeout=DONE)
    expect(page.locator(".stop-reason")).to_have_text("the maximum number of rounds was reached")
    assert page.locator("#progress ol.workers > li").count() == 3
    # the report itself, where the run was watched: its citations land on their evidence
    report = page.locator("article.report")
    expect(report.locator("p.round-line")).to_have_text("The report of round 1 of 1.")
    cite = report.locator("sup.cite a").first
    expect(cite).to_be_visible()
    evidence = page.locator("aside.report-sources ul.evidence li").first
    expect(evidence.locator(".verdict")).to_have_text("supported")
    assert evidence.locator("q").count() == 1  # the quote the check kept
    aside, article = page.locator("aside.report-sources").bounding_box(), report.bounding_box()
    assert aside["x"] >= article["x"] + article["width"]  # beside it on a wide screen
    no_serious_violations(page)
    shot(page, "run-desktop", tmp_path)
    cite.focus()  # its verdict and quote show on focus
    expect(report.locator(".tip").first).to_be_visible()
    shot(page, "report-desktop", tmp_path, full_page=False)
    page.get_by_text("How this run went").click()
    expect(page.get_by_text(re.compile(r"checked, \d+ supported"))).to_be_visible()
    expect(page.get_by_text(re.compile(r"tokens \(no budget set\)"))).to_be_visible()
    no_serious_violations(page)

    page.get_by_role("link", name="The report on its own page").click()
    expect(page.locator("sup.cite a").first).to_be_visible()
    no_serious_violations(page)
    page.go_back()

    cli = tmp_path / "cli"
    files = [cli / f"report.{ext}" for ext in ("md", "html")]
    args = ["export", thread_id, "--checkpoint-db", str(web.store), "--all-doors"]  # a web run
    cli_command([*args, *(a for f in files for a in ("--output", str(f)))])
    for file in files:
        with page.expect_download() as got:
            page.get_by_role(
                "link", name={"md": "Markdown", "html": "HTML"}[file.suffix[1:]]
            ).click()
        assert got.value.path().read_bytes() == file.read_bytes()
    with page.expect_download() as got:
        page.get_by_role("link", name="Word").click()
    assert got.value.path().read_bytes()[:2] == b"PK"


def test_preflight_errors_stand_beside_their_field_before_any_call(browser, web, chat_server):
    page = new_page(browser)
    page.goto(web.url)
    page.get_by_label("Question").fill("   ")
    page.get_by_role("button", name="Start research").click()
    expect(page.locator("#question-error")).to_contain_text("empty")
    expect(page.get_by_label("Question")).to_have_attribute("aria-invalid", "true")
    page.get_by_label("Question").fill("Compare zstd and xz")
    expect(page.get_by_label("Token budget")).to_be_visible()  # opened to show the error
    page.get_by_label("Token budget").fill("0")
    page.evaluate("document.querySelector('#max_total_tokens').removeAttribute('min')")
    page.get_by_role("button", name="Start research").click()
    error = page.locator("#max_total_tokens-error")
    expect(error).to_contain_text("greater than or equal to 1")
    expect(page.get_by_label("Token budget")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Question")).to_have_value("Compare zstd and xz")  # kept
    no_serious_violations(page)
    assert chat_server.brain.calls == {}  # nothing was paid for


def test_source_filters_from_the_form_reach_the_search_and_the_report_header(
    browser, web, search_server, tmp_path
):
    page = new_page(browser)
    page.goto(web.url)
    page.get_by_text("More options").click()
    page.get_by_label("Only these sites").fill("https://www.Example.com/news")
    page.get_by_label("Sources from").select_option(label="The last month")
    page.get_by_label("Report length").select_option(label="Brief (about 600 words)")
    no_serious_violations(page)
    shot(page, "ask-options-desktop", tmp_path)
    ask(page, web, keep_form=True)
    expect(page.locator("#status-line")).to_have_text("Finished", timeout=DONE)
    sent = [r["body"] for r in search_server.searches]
    assert sent and all(b["include_domains"] == ["example.com"] for b in sent)
    assert all(b["time_range"] == "month" for b in sent)
    expect(page.get_by_text("only example.com; from the last month")).to_be_visible()


def test_a_bad_domain_stands_beside_its_field_before_any_call(browser, web, chat_server):
    page = new_page(browser)
    page.goto(web.url)
    page.get_by_label("Question").fill("Compare zstd and xz")
    page.get_by_text("More options").click()
    page.get_by_label("Never these sites").fill("spam.example.com\nnot a domain")
    page.get_by_role("button", name="Start research").click()
    expect(page.locator("#exclude_domains-error")).to_contain_text(
        "'not a domain' is not a domain name"
    )
    field = page.get_by_label("Never these sites")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_have_value("spam.example.com\nnot a domain")  # kept to be corrected
    no_serious_violations(page)
    assert chat_server.brain.calls == {}  # nothing was paid for


def worker_rows(page) -> list[str]:
    """The workers as text (round and subtask first)."""
    return page.locator(
        "#progress section[aria-labelledby=h-workers] ol.workers > li"
    ).all_text_contents()


def test_a_reload_and_a_killed_server_lose_and_repeat_nothing(browser, own_web, chat_server):
    web = own_web  # killed: its own
    chat_server.latency = 0.4
    page = new_page(browser)
    thread_id = ask(page, web, preset="Standard")
    expect(page.locator("#progress section[aria-labelledby=h-workers]")).to_be_visible()
    page.reload()  # served with everything so far, then streamed again
    expect(page.locator("#live")).to_have_attribute("data-stream", "open")
    lost = page.locator(".lost-note")
    expect(lost).to_be_hidden()
    web.kill()  # under the open page, mid-run
    chat_server.latency = STAND_IN_LATENCY  # the slow model kept it mid-run until now
    killed_at = web.records(thread_id)[-1][0]
    expect(lost).to_be_visible()  # the page says the server is gone, not a frozen "running"
    expect(lost).to_contain_text("connection to the server is lost")
    web.start()  # the server resumes the run; the page reconnects by itself
    expect(page.locator("#status-line")).to_have_text("Finished", timeout=DONE)
    expect(lost).to_be_hidden()
    records = web.records(thread_id)
    assert [seq for seq, _, _ in records] == list(range(1, len(records) + 1))
    assert len(records) > killed_at  # the resumed run went on writing after the kill
    expect(page.locator("#live")).to_have_attribute("data-last-event", str(records[-1][0]))
    done = {
        (d["round"], d["subtask_id"])
        for _, kind, d in records
        if kind == "event" and d.get("event") == "worker" and d.get("phase") == "done"
    }
    rows = worker_rows(page)
    assert len(rows) == len(set(rows)) >= len(done)  # each worker once, none missing
    # A worker whose "done" was lost to the kill is shown ended, from the checkpoint.
    assert all(re.search(r" (done|partly done|failed)", row) for row in rows), rows
    page.reload()
    assert worker_rows(page) == rows  # the live page and a fresh load show the same


def test_stop_ends_a_run_at_once_and_resume_finishes_it(browser, web, chat_server):
    chat_server.latency = 0.4
    page = new_page(browser)
    thread_id = ask(page, web, preset="Standard")
    expect(page.locator("#progress section[aria-labelledby=h-workers]")).to_be_visible()
    page.get_by_role("button", name="Stop").click()
    expect(page.locator("#status-line")).to_have_text("Stopped (resumable)")
    page.wait_for_timeout(500)  # a call already sent is answered; the server cannot unsend it
    calls = len(chat_server.requests) + chat_server.in_flight
    page.wait_for_timeout(2000)
    assert len(chat_server.requests) + chat_server.in_flight == calls  # nothing new after Stop
    chat_server.latency = STAND_IN_LATENCY  # the slow model kept it mid-run until now
    no_serious_violations(page)
    page.get_by_role("button", name="Resume").click()
    expect(page.locator("#status-line")).to_have_text("Finished", timeout=DONE)
    kinds = [kind for _, kind, _ in web.records(thread_id)]
    assert kinds.count("stopped") == 1 and kinds.count("resumed") == 1


def test_a_plan_edited_in_the_form_is_researched_as_edited(
    browser, web, chat_server, search_server, tmp_path
):
    page = new_page(browser)
    ask(page, web, approve=True)
    expect(page.locator("#status-line")).to_have_text("Waiting for your answer on the plan")
    no_serious_violations(page)
    shot(page, "plan-desktop", tmp_path)
    page.get_by_label("Subtask 1", exact=True).fill("zstd dictionary training")
    page.get_by_label("Remove 2").check()
    page.get_by_label("New subtask (leave empty for none) 1").fill("xz memory use")
    searched_before = len(search_server.queries)
    page.get_by_role("button", name="Research the edited plan").click()
    expect(page.locator("#status-line")).to_have_text("Finished", timeout=DONE)
    plan = page.locator("ol.plan li").all_text_contents()
    assert [p.split(" (")[0] for p in plan] == [
        "zstd dictionary training",
        f"{QUESTION} — aspect 3",
        "xz memory use",
    ]
    sent = search_server.queries[searched_before:]
    assert "zstd dictionary training" in sent and "xz memory use" in sent
    assert not any("aspect 2" in q for q in sent)  # the removed subtask was not researched


def test_a_rejected_plan_ends_the_run_without_research(browser, web, search_server):
    page = new_page(browser)
    ask(page, web, approve=True)
    page.get_by_role("button", name="Reject the plan").click()
    expect(page.locator("#status-line")).to_have_text("Finished", timeout=DONE)
    expect(page.locator(".stop-reason")).to_have_text("the plan was rejected")
    assert search_server.queries == []


def test_the_keyboard_alone_starts_watches_and_reads(browser, web):
    page = new_page(browser)
    page.goto(web.url)

    def tab_to(selector: str) -> None:
        """Press Tab until the element has focus (at most 40 times)."""
        for _ in range(40):
            page.keyboard.press("Tab")
            if page.evaluate(f"document.activeElement === document.querySelector('{selector}')"):
                return
        raise AssertionError(f"Tab never reached {selector}")

    tab_to("#question")
    page.keyboard.type(QUESTION)
    tab_to("#preset-standard")
    page.keyboard.press("ArrowUp")  # radio group: to Quick
    assert page.get_by_label(re.compile("^Quick")).is_checked()
    tab_to("button.primary")
    page.keyboard.press("Enter")
    expect(page.locator("#status-line")).to_have_text("Finished", timeout=DONE)
    tab_to("article.report sup.cite a")  # the report is on the page: its first citation
    expect(page.locator("article.report .tip").first).to_be_visible()  # verdict and quote


@pytest.mark.web_flags("--all-doors")  # the operator lets the app show the terminal's runs
def test_history_lists_every_door_and_opens_resumes_exports_deletes(browser, own_web, tmp_path):
    web = own_web  # the whole history: its own
    quick = ["--max-iterations", "1", "--min-iterations", "1", "--quiet"]
    store = ["--checkpoint-db", str(web.store), "--thread-id", "from-the-cli"]
    cli_command(["run", "CLI question about zstd", *quick, *store])
    page = new_page(browser)
    thread_id = ask(page, web)
    expect(page.locator("#status-line")).to_have_text("Finished", timeout=DONE)
    page.get_by_role("link", name="History").click()
    rows = page.locator("table.history tbody tr")
    expect(rows).to_have_count(2)
    texts = rows.all_inner_texts()
    assert any("CLI question about zstd" in t and "Finished" in t for t in texts)
    assert all(re.search(r"\d+(\.\d+)?\s", t) for t in texts)  # a score on each finished run
    no_serious_violations(page)
    no_word_broken(page)
    shot(page, "history-desktop", tmp_path)
    page.get_by_label("Words in the question").fill("cli ZSTD")  # every word, any case
    page.get_by_role("button", name="Show").click()
    expect(rows).to_have_count(1)
    expect(page.get_by_role("status")).to_have_text("1 of 2 runs")
    page.get_by_label("Words in the question").fill("")
    page.get_by_label("Status").select_option(label="Failed (resumable)")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_text("No run matches")).to_be_visible()
    page.get_by_label("Status").select_option(label="Finished")
    page.get_by_label("Started on or after").fill("2001-01-01")
    page.get_by_role("button", name="Show").click()
    expect(rows).to_have_count(2)
    no_serious_violations(page)
    page.get_by_role("link", name="History").click()
    with page.expect_download() as got:
        rows.filter(has_text="CLI question").get_by_role("link", name="Export").click()
    assert b"CLI question about zstd" in got.value.path().read_bytes()
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    rows.filter(has_text=QUESTION).get_by_role("button", name="Delete").click()
    assert asked and "cannot be undone" in asked[0]
    expect(rows).to_have_count(2)  # dismissed: nothing deleted
    page.once("dialog", lambda dialog: dialog.accept())
    rows.filter(has_text=QUESTION).get_by_role("button", name="Delete").click()
    expect(rows).to_have_count(1)
    assert page.console_errors == []  # no CSP refusal (htmx's inline style), no favicon 404
    assert web.records(thread_id) == []
    page.goto(f"{web.url}/runs/{thread_id}")
    expect(page.locator("h1")).to_have_text("404")


def test_phone_width_in_chinese(browser, web, tmp_path):
    page = new_page(browser, viewport=PHONE, lang="zh-CN")
    page.goto(web.url)
    expect(page.get_by_label("问题")).to_be_visible()
    no_serious_violations(page)
    shot(page, "ask-phone-zh", tmp_path)
    page.get_by_label("问题").fill("   ")
    page.get_by_role("button", name="开始研究").click()
    expect(page.locator("#question-error")).to_have_text("问题是空的")  # in the page's words
    page.get_by_label("问题").fill("比较 zstd 和 xz 压缩日志")
    page.get_by_label(re.compile("^快速")).check()
    page.get_by_role("button", name="开始研究").click()
    expect(page.locator("#status-line")).to_have_text("已完成", timeout=DONE)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    article = page.locator("article.report").bounding_box()
    aside = page.locator("aside.report-sources").bounding_box()
    assert aside["y"] >= article["y"] + article["height"]  # the sources below it on a phone
    no_serious_violations(page)
    shot(page, "run-phone-zh", tmp_path)
    page.get_by_role("link", name="English").click()
    expect(
        page.get_by_role("button", name="Start research").or_(page.locator("#status-line"))
    ).to_be_visible()
    expect(page.locator("#status-line")).to_have_text("Finished")
    page.set_viewport_size(PHONE)
    no_word_broken(page)
    shot(page, "run-phone", tmp_path)
    page.get_by_role("link", name="History").click()
    expect(page.locator("table.history")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    no_word_broken(page)
    no_serious_violations(page)
    shot(page, "history-phone", tmp_path)


def test_a_follow_up_is_answered_from_the_runs_evidence_as_a_linked_run(
    browser, web, search_server
):
    page = new_page(browser)
    first = ask(page, web)
    expect(page.locator("#status-line")).to_have_text("Finished", timeout=DONE)
    searched = len(search_server.searches)
    page.get_by_label("Follow-up question").fill("Which of the two decompresses faster?")
    page.get_by_role("button", name="Ask", exact=True).click()
    page.wait_for_url(lambda url: first not in url)
    expect(page.get_by_role("link", name=first)).to_be_visible()  # linked to the first run
    expect(page.locator("#status-line")).to_have_text("Finished", timeout=DONE)
    assert len(search_server.searches) == searched  # the first run's evidence sufficed
    no_serious_violations(page)
    expect(page.locator("article.report sup.cite a").first).to_be_visible()


def test_a_vague_question_is_asked_back_in_a_small_form_and_the_answers_are_researched(
    browser, web, chat_server, tmp_path
):
    chat_server.brain.clarifying = [
        {"question": "Which logs?", "suggested_answers": ["web server logs", "database logs"]},
        {"question": "What matters most?", "suggested_answers": ["ratio", "speed"]},
    ]
    for lang, width, name in (("zh-CN", PHONE, "clarify-phone-zh"), ("en-US", DESKTOP, "")):
        page = new_page(browser, viewport=width, lang=lang)
        page.goto(web.url)
        page.locator("#question").fill("compression?")
        page.locator("#preset-quick").check()
        page.locator("button.primary").click()
        expect(page.locator("#status-line")).to_have_text(
            "等待您的回答" if lang == "zh-CN" else "Waiting for your answers"
        )
        no_serious_violations(page)
        if name:
            shot(page, name, tmp_path)
            page.get_by_role("button", name="跳过：按原问题研究").click()  # skipped: as asked
            expect(page.locator("#status-line")).to_have_text("已完成", timeout=DONE)
    shot(page, "clarify-desktop", tmp_path)
    page.get_by_label("web server logs").check()
    page.get_by_label("Or in your own words").nth(1).fill("decompression speed")
    page.get_by_role("button", name="Research with these answers").click()
    expect(page.locator("#status-line")).to_have_text("Finished", timeout=DONE)
    header = page.locator("article.report dl.facts")
    expect(header).to_contain_text("Which logs? web server logs")
    expect(header).to_contain_text("What matters most? decompression speed")
    plans = [r["body"] for r in chat_server.chat_requests if "TaskPlan" in json.dumps(r["body"])]
    assert len(plans) == 2 and "decompression speed" in json.dumps(plans[-1])
    assert "web server logs" not in json.dumps(plans[0])  # the skipped run: as asked


def test_no_question_is_asked_back_when_the_person_says_so(browser, web, chat_server):
    chat_server.brain.clarifying = [{"question": "Which logs?", "suggested_answers": ["web"]}]
    page = new_page(browser)
    page.goto(web.url)
    page.get_by_label("Ask me back first if what to research is unclear").uncheck()
    ask(page, web, question="compression?", keep_form=True)
    expect(page.locator("#status-line")).to_have_text("Finished", timeout=DONE)
    assert chat_server.brain.calls["Clarification"] == 0


def test_without_script_a_run_is_asked_watched_by_reloads_and_read(browser, web, tmp_path):
    context = browser.new_context(viewport=DESKTOP, java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(STEP)
    page.goto(web.url)
    page.get_by_label("Question").fill(QUESTION)
    page.get_by_label(re.compile("^Quick")).check()
    page.get_by_role("button", name="Start research").click()
    page.wait_for_url(re.compile(r"/runs/web-"))
    expect(page.locator("#status-line")).to_have_text("Finished", timeout=DONE)  # it reloads
    expect(page.locator("article.report sup.cite a").first).to_be_visible()
    assert page.locator("aside.report-sources ul.evidence li q").count() >= 1
    page.get_by_label("Follow-up question").fill("Which of the two decompresses faster?")
    page.get_by_role("button", name="Ask", exact=True).click()
    expect(page.locator("#status-line")).to_have_text("Finished", timeout=DONE)
    context.close()


# Last in the module: the shared server's history, which the phone test shows (and the docs'
# screenshot of it), holds no hostile question.
def test_hostile_question_and_source_titles_stay_inert_on_every_page(browser, web, search_server):
    answer = search_server.handle

    def hostile(path, body, headers):
        reply = answer(path, body, headers)
        for result in reply.body.get("results", []) if isinstance(reply.body, dict) else []:
            result["title"] = (
                '<img src=x onerror="document.title=1">"><script>document.title=1</script>'
            )
        return reply

    search_server.handle = hostile
    page = new_page(browser)
    fired = []
    page.on("dialog", lambda dialog: fired.append(dialog.message))
    thread_id = ask(page, web, question=HOSTILE)
    expect(page.locator("#status-line")).to_have_text("Finished", timeout=DONE)
    check_inert(page)
    for path in (f"/runs/{thread_id}", f"/runs/{thread_id}/report", "/runs"):
        page.goto(f"{web.url}{path}")
        check_inert(page)
    expect(page.get_by_role("link", name=HOSTILE)).to_be_visible()  # shown as text
    assert fired == []


def check_inert(page) -> None:
    """No script or handler from outside text ran or exists on the page."""
    assert page.title() not in ("pwned", "1")
    assert page.locator("img[src=x], main script, #main script").count() == 0
    assert "<script>" in page.locator("body").inner_text()  # the text is there, as text
