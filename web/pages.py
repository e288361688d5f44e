"""The web app's pages, built with the HTML export's element builder: every outside text (the
question, plan, titles, errors) goes in as text and is escaped when the tree is written."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from lxml import html as lxml_html

from deep_research.domain.labels import score_text
from deep_research.export.document import safe_href
from deep_research.export.html_page import blocks, el, facts_list, sources_section
from deep_research.tools.events import EarlierReportKept
from deep_research.web.forms import MAX_NEW_SUBTASKS, PRESETS
from deep_research.web.history_filter import STATUSES, HistoryFilter
from deep_research.web.labels import UiLanguage, words
from deep_research.web.view import RunView, WorkerRow

LANGUAGES = {
    "en": "English",
    "zh-Hans": "简体中文",
    "zh-Hant": "繁體中文",
    "ja": "日本語",
    "ko": "한국어",
    "de": "Deutsch",
    "fr": "Français",
    "es": "Español",
    "it": "Italiano",
    "pt": "Português",
    "nl": "Nederlands",
    "ru": "Русский",
}
"""The report languages the form offers, each in its own name (as language pickers do)."""
BACKEND_NAMES = {"tavily": "Tavily", "bocha": "Bocha", "searxng": "SearXNG"}
BACKEND_NAMES |= {"duckduckgo": "DuckDuckGo"}
FORMATS = (("md", "Markdown"), ("html", "HTML"), ("docx", "Word"), ("pdf", "PDF"))
LIVE = ("queued", "running")
# htmx's own inline <style> and eval would break the page CSP (no inline style or script): off
HTMX_CONFIG = '{"includeIndicatorStyles": false, "allowEval": false, "allowScriptTags": false}'


def html_text(node: Any) -> str:
    """An element (or several) as HTML text."""
    nodes = node if isinstance(node, list) else [node]
    return "".join(lxml_html.tostring(n, encoding="unicode", method="html") for n in nodes)


def page(
    title: str,
    body: list,
    lang: UiLanguage,
    csrf: str,
    path: str,
    refresh: bool = False,
    wide: bool = False,
) -> str:
    """A whole page: header with navigation, the body in `main`, scripts from this server.
    `refresh`: without script the page reloads itself every few seconds (a live run);
    `wide`: room for a report and its sources side by side."""
    w = words(lang)
    other = "zh" if lang == "en" else "en"
    head = el(
        "head",
        {},
        el("meta", {"charset": "utf-8"}),
        el("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
        el("meta", {"name": "csrf", "content": csrf}),
        el("meta", {"name": "htmx-config", "content": HTMX_CONFIG}),
        el("title", {}, f"{title} · {w['app']}"),
        el("link", {"rel": "stylesheet", "href": "/static/web.css"}),
        el("link", {"rel": "icon", "href": "/static/favicon.svg", "type": "image/svg+xml"}),
        el("script", {"src": "/static/htmx.min.js", "defer": "defer"}),
        el("script", {"src": "/static/sse.js", "defer": "defer"}),
        el("script", {"src": "/static/web.js", "defer": "defer"}),
        el("noscript", {}, el("meta", {"http-equiv": "refresh", "content": "5"}))
        if refresh
        else None,
    )
    header = el(
        "header",
        {"class": "bar"},
        el("a", {"class": "skip", "href": "#main"}, w["skip"]),
        el(
            "nav",
            {"aria-label": w["app"]},
            el("a", {"href": "/", "class": "brand"}, w["app"]),
            el("a", {"href": "/"}, w["new"]),
            el("a", {"href": "/runs"}, w["history"]),
            el(
                "a", {"href": f"{path}?lang={other}", "lang": other, "hreflang": other}, w["switch"]
            ),
        ),
    )
    main = el("main", {"id": "main", "tabindex": "-1", "class": "wide" if wide else None}, *body)
    document = el(
        "html", {"lang": "zh-Hans" if lang == "zh" else "en"}, head, el("body", {}, header, main)
    )
    return lxml_html.tostring(document, doctype="<!DOCTYPE html>", encoding="unicode")


def _csrf(token: str):
    """The hidden field every state-changing form carries."""
    return el("input", {"type": "hidden", "name": "csrf", "value": token})


def _error(field: str, errors: dict[str, str]):
    """The error shown beside a field (or nothing)."""
    if field not in errors:
        return None
    return el("p", {"class": "error", "id": f"{field}-error"}, errors[field])


def _described(field: str, errors: dict[str, str], hint: str | None = None) -> dict[str, str]:
    """aria attributes tying a field to its hint and its error."""
    ids = [i for i in (hint, f"{field}-error" if field in errors else None) if i]
    attrs = {"aria-describedby": " ".join(ids)} if ids else {}
    if field in errors:
        attrs["aria-invalid"] = "true"
    return attrs


def _select(
    name: str, label: str, choices: list[tuple[str, str]], form, errors, lang_of: bool = False
) -> list:
    """A labelled select with its error (`lang_of`: each choice is a language code, and its
    text is in that language)."""
    chosen = form.get(name, "")
    options = [
        el(
            "option",
            {
                "value": v,
                "selected": "selected" if v == chosen else None,
                "lang": v if lang_of and v else None,
            },
            text,
        )
        for v, text in choices
    ]
    attrs = {"id": name, "name": name, **_described(name, errors)}
    return [el("label", {"for": name}, label), el("select", attrs, *options), _error(name, errors)]


def _number(name: str, label: str, form, errors) -> list:
    """A labelled number field with its error."""
    attrs = {
        "id": name,
        "name": name,
        "type": "number",
        "min": "1",
        "inputmode": "numeric",
        "value": form.get(name) or None,
        **_described(name, errors),
    }
    return [el("label", {"for": name}, label), el("input", attrs), _error(name, errors)]


def _domains(name: str, label: str, hint: str, form, errors) -> list:
    """A labelled text field for domains (commas or lines), with its hint and its error."""
    attrs = {
        "id": name,
        "name": name,
        "rows": "2",
        "maxlength": "2000",
        "spellcheck": "false",
        "autocapitalize": "off",
        **_described(name, errors, f"{name}-hint"),
    }
    return [
        el("label", {"for": name}, label),
        el("p", {"id": f"{name}-hint", "class": "hint"}, hint),
        el("textarea", attrs, form.get(name, "")),
        _error(name, errors),
    ]


def ask_page(
    lang: UiLanguage,
    csrf: str,
    form: dict[str, str],
    errors: dict[str, str],
    backends: list[str],
) -> str:
    """The page that starts a run: the question, the depth, the common options; `backends`:
    the searches this server can use (`local` and `hybrid` when it has a document folder)."""
    w = words(lang)
    chosen = form.get("preset") or "standard"
    presets = [
        el(
            "div",
            {"class": "choice"},
            el(
                "input",
                {
                    "type": "radio",
                    "name": "preset",
                    "id": f"preset-{name}",
                    "value": name,
                    "checked": "checked" if name == chosen else None,
                },
            ),
            el(
                "label", {"for": f"preset-{name}"}, w[name], " ", el("small", {}, w[f"{name}_hint"])
            ),
        )
        for name in PRESETS
    ]
    languages = [("", w["auto"]), *LANGUAGES.items()]
    searches = [("", w["server_default"])]
    searches += [(b, BACKEND_NAMES.get(b) or w[f"search_{b}"]) for b in backends]
    spans = [("", w["any_time"]), *((s, w[s]) for s in ("day", "week", "month", "year"))]
    lengths = [("", w["server_default"]), ("brief", w["brief"])]
    lengths += [("standard", w["standard_length"]), ("long", w["long"])]
    options = [
        *_select("language", w["language"], languages, form, errors, lang_of=True),
        *_select("search_backend", w["search_backend"], searches, form, errors),
        *_domains("include_domains", w["include_domains"], w["domains_hint"], form, errors),
        *_domains("exclude_domains", w["exclude_domains"], w["domains_hint"], form, errors),
        *_select("time_range", w["time_range"], spans, form, errors),
        *_select("report_length", w["report_length"], lengths, form, errors),
        *_number("max_total_tokens", w["max_total_tokens"], form, errors),
        *_number("max_search_calls", w["max_search_calls"], form, errors),
    ]
    if "local" in backends or "corpus_dir" in errors:
        attrs = {"id": "corpus_dir", "name": "corpus_dir", "value": form.get("corpus_dir") or None}
        options += [
            el("label", {"for": "corpus_dir"}, w["corpus_dir"]),
            el("input", {**attrs, **_described("corpus_dir", errors)}),
            _error("corpus_dir", errors),
        ]
    summary = [el("p", {"class": "error", "role": "alert"}, w["fix"])] if errors else []
    if "" in errors:
        summary.append(el("p", {"class": "error", "id": "-error"}, errors[""]))
    question_attrs = {
        "id": "question",
        "name": "question",
        "rows": "4",
        "required": "required",
        "maxlength": "4000",
        **_described("question", errors, "question-hint"),
    }
    ask_back = el(
        "div",
        {"class": "choice"},
        el(
            "input",
            {
                "type": "checkbox",
                "id": "ask_back",
                "name": "ask_back",
                "checked": "checked" if not form or form.get("ask_back") == "on" else None,
            },
        ),
        el("label", {"for": "ask_back"}, w["ask_back"]),
    )
    approve = el(
        "div",
        {"class": "choice"},
        el(
            "input",
            {
                "type": "checkbox",
                "id": "approve_plan",
                "name": "approve_plan",
                "checked": "checked" if form.get("approve_plan") == "on" else None,
            },
        ),
        el("label", {"for": "approve_plan"}, w["approve_plan"]),
    )
    body = [
        el("h1", {}, w["new"]),
        *summary,
        el(
            "form",
            {"method": "post", "action": "/runs", "class": "ask"},
            _csrf(csrf),
            el("label", {"for": "question", "class": "big"}, w["question"]),
            el("p", {"id": "question-hint", "class": "hint"}, w["question_hint"]),
            el("textarea", question_attrs, form.get("question", "")),
            _error("question", errors),
            el("fieldset", {}, el("legend", {}, w["depth"]), *presets, _error("preset", errors)),
            el(
                "details",
                {"open": "open" if errors else None},
                el("summary", {}, w["options"]),
                *options,
            ),
            ask_back,
            approve,
            el("button", {"type": "submit", "class": "primary"}, w["start"]),
        ),
    ]
    return page(w["new"], body, lang, csrf, "/")


def _post_button(action: str, label: str, csrf: str, kind: str = "", confirm: str = "") -> Any:
    """A one-button form that POSTs to `action`; with `confirm`, web.js asks that first."""
    return el(
        "form",
        {"method": "post", "action": action, "class": "inline", "data-confirm": confirm or None},
        _csrf(csrf),
        el("button", {"type": "submit", "class": kind or None}, label),
    )


def follow_up_form(view: RunView, lang: UiLanguage, csrf: str, error: str = "") -> Any:
    """A follow-up question on a finished run (a new run, linked to this one)."""
    w = words(lang)
    errors = {"follow_up": error} if error else {}
    attrs = {
        "id": "follow_up",
        "name": "question",
        "rows": "2",
        "required": "required",
        "maxlength": "4000",
        **_described("follow_up", errors, "follow_up-hint"),
    }
    return el(
        "form",
        {"method": "post", "action": f"/runs/{view.thread_id}/ask", "class": "follow-up"},
        _csrf(csrf),
        el("h2", {}, w["follow_up"]),
        el("label", {"for": "follow_up"}, w["follow_up_question"]),
        el("p", {"id": "follow_up-hint", "class": "hint"}, w["follow_up_hint"]),
        el("textarea", attrs, ""),
        _error("follow_up", errors),
        el("button", {"type": "submit"}, w["ask"]),
    )


def _status(view: RunView, w: dict[str, str]) -> str:
    """Where the run stands, in words (a waiting run says what it waits for)."""
    return w["s_asking"] if view.waiting_questions else w[f"s_{view.status}"]


def controls(view: RunView, lang: UiLanguage, csrf: str) -> Any:
    """Status in words, and what a person can do now (stop, resume, download, answer the
    plan)."""
    w = words(lang)
    base = f"/runs/{view.thread_id}"
    parts: list = [
        el("p", {"class": f"status {view.status}", "id": "status-line"}, _status(view, w))
    ]
    if view.error:
        parts.append(el("p", {"class": "error"}, view.error))
    if view.status in LIVE:
        parts.append(_post_button(f"{base}/stop", w["stop"], csrf, "danger"))
    if view.status in ("stopped", "failed", "unfinished"):
        parts.append(_post_button(f"{base}/resume", w["resume"], csrf, "primary"))
    if view.status == "done":
        downloads = [
            el("li", {}, el("a", {"href": f"{base}/export.{ext}", "download": ""}, name))
            for ext, name in FORMATS
        ]
        alone = el("li", {}, el("a", {"href": f"{base}/report"}, w["report_alone"]))
        parts.append(
            el(
                "nav",
                {"aria-label": w["downloads"], "class": "downloads"},
                el("span", {"class": "label"}, f"{w['downloads']}:"),
                el("ul", {"class": "downloads"}, *downloads, alone),
            )
        )
    if view.status == "waiting" and view.waiting_plan:
        parts.append(plan_form(view, lang, csrf))
    if view.status == "waiting" and view.waiting_questions:
        parts.append(questions_form(view, lang, csrf))
    return el("div", {"id": "controls-inner"}, *parts)


def questions_form(view: RunView, lang: UiLanguage, csrf: str) -> Any:
    """The questions asked back before research: a suggested answer to pick or one's own
    words for each, then research with them, or skip and research the question as asked."""
    w = words(lang)
    groups = []
    for n, asked in enumerate(view.waiting_questions):
        choices = [
            el(
                "div",
                {"class": "choice"},
                el(
                    "input",
                    {"type": "radio", "name": f"answer-{n}", "id": f"a-{n}-{k}", "value": text},
                ),
                el("label", {"for": f"a-{n}-{k}", "dir": "auto"}, text),
            )
            for k, text in enumerate(asked.get("suggested_answers") or [])
        ]
        groups.append(
            el(
                "fieldset",
                {},
                el("legend", {"dir": "auto"}, f"{n + 1}. {asked['question']}"),
                *choices,
                el("label", {"for": f"own-{n}"}, w["own_answer"]),
                el("input", {"id": f"own-{n}", "name": f"own-{n}", "maxlength": "300"}),
            )
        )
    return el(
        "form",
        {
            "method": "post",
            "action": f"/runs/{view.thread_id}/answers",
            "class": "plan-form questions-form",
            "aria-labelledby": "questions-wait",
        },
        _csrf(csrf),
        el("h2", {"id": "questions-wait"}, w["questions_wait"]),
        el("p", {"class": "hint"}, w["questions_hint"]),
        *groups,
        el(
            "div",
            {"class": "actions"},
            el(
                "button",
                {"type": "submit", "name": "action", "value": "answer", "class": "primary"},
                w["answer_questions"],
            ),
            el(
                "button", {"type": "submit", "name": "action", "value": "skip"}, w["skip_questions"]
            ),
        ),
    )


def plan_form(view: RunView, lang: UiLanguage, csrf: str) -> Any:
    """The waiting plan as a form: each subtask's text editable or removable, new ones added."""
    w = words(lang)
    plan = view.waiting_plan or {}
    rows = []
    for task in plan.get("subtasks", []):
        key = str(task["id"])
        rows.append(
            el(
                "li",
                {},
                el("input", {"type": "hidden", "name": "id", "value": key}),
                el("label", {"for": f"description-{key}"}, f"{w['subtask']} {key}"),
                el(
                    "textarea",
                    {"id": f"description-{key}", "name": f"description-{key}", "rows": "2"},
                    task["description"],
                ),
                _complexity(f"complexity-{key}", task.get("complexity", "medium"), w),
                el(
                    "span",
                    {"class": "choice"},
                    el(
                        "input",
                        {"type": "checkbox", "name": "remove", "value": key, "id": f"remove-{key}"},
                    ),
                    el("label", {"for": f"remove-{key}"}, f"{w['remove']} {key}"),
                ),
            )
        )
    for n in range(MAX_NEW_SUBTASKS):
        rows.append(
            el(
                "li",
                {"class": "new"},
                el("label", {"for": f"new-{n}"}, f"{w['add_subtask']} {n + 1}"),
                el("textarea", {"id": f"new-{n}", "name": f"new-{n}", "rows": "2"}, ""),
                _complexity(f"new-complexity-{n}", "medium", w),
            )
        )
    base = f"/runs/{view.thread_id}/plan"
    return el(
        "form",
        {"method": "post", "action": base, "class": "plan-form", "aria-labelledby": "plan-waits"},
        _csrf(csrf),
        el("h2", {"id": "plan-waits"}, w["plan_waits"]),
        el("ol", {}, *rows),
        el(
            "div",
            {"class": "actions"},
            el(
                "button",
                {"type": "submit", "name": "action", "value": "approve", "class": "primary"},
                w["approve"],
            ),
            el("button", {"type": "submit", "name": "action", "value": "edit"}, w["edit"]),
            el(
                "button",
                {"type": "submit", "name": "action", "value": "reject", "class": "danger"},
                w["reject"],
            ),
        ),
    )


def _complexity(name: str, chosen: str, w: dict[str, str]) -> Any:
    """A subtask's complexity as a select."""
    options = [
        el("option", {"value": c, "selected": "selected" if c == chosen else None}, w[f"c_{c}"])
        for c in ("simple", "medium", "complex")
    ]
    return el(
        "span",
        {},
        el("label", {"for": name}, w["complexity"]),
        el("select", {"id": name, "name": name}, *options),
    )


def _table(caption: str, head: list[str], rows: list[list[Any]]) -> Any:
    """A table with a caption and header row, in a scrolling wrapper for narrow screens."""
    return el(
        "div",
        {"class": "table", "role": "region", "aria-label": caption, "tabindex": "0"},
        el(
            "table",
            {},
            el("caption", {}, caption),
            el("thead", {}, el("tr", {}, *(el("th", {"scope": "col"}, h) for h in head))),
            el(
                "tbody",
                {},
                *(el("tr", {}, *(el("td", {"dir": "auto"}, c) for c in row)) for row in rows),
            ),
        ),
    )


def _spending(view: RunView, w: dict[str, str]) -> Any:
    """Tokens, searches and cost against their budgets."""

    def against(spent: Any, budget: Any, unit: str) -> str:
        """`1,234 of 50,000 tokens`, or with no budget set."""
        limit = f"{w['of']} {budget:,}" if budget else f"({w['no_budget']})"
        return f"{spent:,} {unit} {limit}"

    items = [
        against(view.usage.get("tokens", 0), view.budgets.get("tokens"), w["tokens"]),
        against(view.usage.get("searches", 0), view.budgets.get("searches"), w["searches"]),
    ]
    if view.cost_usd is not None or view.budgets.get("cost"):
        cost = "-" if view.cost_usd is None else f"${view.cost_usd:.4f}"
        budget = view.budgets.get("cost")
        items.append(f"{w['cost']}: {cost}" + (f" {w['of']} ${budget:g}" if budget else ""))
    return el("ul", {"class": "spending"}, *(el("li", {}, i) for i in items))


def _plan(view: RunView, w: dict[str, str]) -> Any:
    """The plan's subtasks, numbered, each with its complexity."""
    if view.plan is None:
        return None
    tasks = [
        el(
            "li",
            {"dir": "auto"},
            t.description,
            " ",
            el("small", {}, f"({w.get(f'c_{t.complexity}', t.complexity)})"),
        )
        for t in view.plan.subtasks
    ]
    return el(
        "section",
        {"aria-labelledby": "h-plan"},
        el("h2", {"id": "h-plan"}, w["plan"]),
        el("ol", {"class": "plan"}, *tasks),
    )


def _link(url: str, title: str) -> Any:
    """An outside page as a link when its address is a web address (else as text)."""
    href = safe_href(url)
    text = el("bdi", {}, title or url)
    if href is None:
        return text
    return el("a", {"href": href, "rel": "noopener noreferrer nofollow"}, text)


def _worker_line(row: WorkerRow, w: dict[str, str]) -> Any:
    """One worker: its subtask, what it does now (the page it reads), how far its budget went."""
    phase = w.get(f"w_{row.phase}", row.phase) + (f" — {row.error}" if row.error else "")
    figures = [f"{w['queries']} {row.queries}", f"{w['cycles']} {row.cycles}"]
    if row.findings is not None:
        figures += [f"{w['findings']} {row.findings}", f"{w['sources']} {row.sources}"]
    reading = None
    if row.reading is not None and row.phase == "reading":
        reading = el("p", {"class": "reading"}, f"{w['reading_now']} ", _link(*row.reading))
    return el(
        "li",
        {"class": f"worker {row.phase}"},
        el("span", {"class": "task", "dir": "auto"}, f"{row.subtask_id}. {row.description}"),
        " ",
        el("span", {"class": "phase"}, phase),
        el("span", {"class": "figures"}, " · ".join(figures)),
        reading,
    )


def _workers(view: RunView, w: dict[str, str]) -> Any:
    """Every worker of every round, as its latest event left it."""
    if not view.workers:
        return None
    rounds = sorted({r.round for r in view.workers.values()})
    groups = []
    for number in rounds:
        rows = sorted((r for r in view.workers.values() if r.round == number), key=_by_task)
        if len(rounds) > 1:
            groups.append(el("h3", {}, f"{w['round']} {number}"))
        groups.append(el("ol", {"class": "workers"}, *(_worker_line(r, w) for r in rows)))
    return el(
        "section",
        {"aria-labelledby": "h-workers"},
        el("h2", {"id": "h-workers"}, w["workers"]),
        *groups,
    )


def _by_task(row: WorkerRow) -> int:
    return row.subtask_id


def _found(view: RunView, w: dict[str, str]) -> Any:
    """The sources the workers kept so far, as links."""
    items = [el("li", {"dir": "auto"}, _link(url, title)) for url, title in view.found.items()]
    listed = el("ol", {"class": "found"}, *items) if items else el("p", {}, w["found_none"])
    return el(
        "section",
        {"aria-labelledby": "h-found"},
        el("h2", {"id": "h-found"}, f"{w['found_so_far']} ({len(items)})"),
        listed,
    )


def _rounds(view: RunView, w: dict[str, str]) -> Any:
    """Each round's score, and the gaps its review found."""
    if not view.rounds:
        return None
    rows = [
        [
            str(r.round),
            score_text(r.score, unknown="-"),
            "; ".join(r.gaps + [f"→ {t}" for t in r.tasks]) or "-",
        ]
        for r in sorted(view.rounds.values(), key=lambda r: r.round)
    ]
    return el(
        "section",
        {"aria-labelledby": "h-rounds"},
        el("h2", {"id": "h-rounds"}, w["rounds"]),
        _table(w["rounds"], [w["round"], w["score"], w["gaps"]], rows),
    )


def _citations(view: RunView, w: dict[str, str]) -> Any:
    """The citation check in one line."""
    if view.citations is None:
        return None
    c = view.citations
    share = "-" if c.precision is None else f"{c.precision:.0%}"
    line = w["cite_line"].format(
        checked=c.checked,
        supported=c.supported,
        share=share,
        removed=c.removed,
        rewritten=c.rewritten,
    )
    return el(
        "section",
        {"aria-labelledby": "h-cite"},
        el("h2", {"id": "h-cite"}, w["citations"]),
        el("p", {}, line),
    )


def _spent(view: RunView, w: dict[str, str]) -> Any:
    return el(
        "section",
        {"aria-labelledby": "h-spend"},
        el("h2", {"id": "h-spend"}, w["spending"]),
        _spending(view, w),
    )


def _stopped(view: RunView, w: dict[str, str]) -> Any:
    """Why the run stopped, in words (or nothing while it goes on)."""
    if not view.stop_reason:
        return None
    reason = w.get(view.stop_reason, view.stop_reason)
    return el("p", {}, f"{w['stop_reason']}: ", el("span", {"class": "stop-reason"}, reason))


def _round_line(view: RunView, w: dict[str, str]) -> str:
    """Which round's report the reader is given."""
    if view.kept is not None:
        return _kept(view.kept, w)
    rounds = max(view.iteration, 1)
    return w["report_of_round"].format(round=rounds, rounds=rounds)


def _finished(view: RunView, w: dict[str, str]) -> Any:
    """The report itself, as the export shows it (title, facts, summary, sections, each
    citation with its verdict and quote), with its sources beside it on a wide screen."""
    document = view.rendering.document()
    title = document.title or w["the_report"]
    article = el(
        "article",
        {
            "class": "report",
            "lang": document.language,
            "dir": document.direction,
            "aria-labelledby": "h-report",
        },
        el("h2", {"id": "h-report", "class": "report-title", "dir": "auto"}, title),
        el("p", {"class": "round-line"}, _round_line(view, w)),
        _stopped(view, w),
        facts_list(document),
        *blocks(document.blocks, document.language),
    )
    aside = None
    if document.sources:
        aside = el(
            "aside",
            {"class": "report-sources", "lang": document.language, "aria-label": w["sources"]},
            sources_section(document),
        )
    return el("div", {"class": "reading"}, article, aside)


def progress(view: RunView, lang: UiLanguage, csrf: str = "", follow_error: str = "") -> Any:
    """While the run goes on: the plan, each worker with the page it reads, the sources found
    so far, the rounds and spending. Once it has finished: the report itself with its
    sources, the follow-up box, and how the run went (folded away)."""
    w = words(lang)
    if view.rendering is not None:
        details = [
            _plan(view, w),
            _workers(view, w),
            _rounds(view, w),
            _citations(view, w),
            _spent(view, w),
        ]
        sections = [
            _finished(view, w),
            follow_up_form(view, lang, csrf, follow_error),
            el(
                "details",
                {"class": "run-details"},
                el("summary", {}, w["run_details"]),
                *details,
            ),
        ]
        return el("div", {"id": "progress-inner"}, *sections)
    sections = [
        _plan(view, w),
        _workers(view, w),
        _found(view, w) if view.plan is not None else None,
        _rounds(view, w),
        _citations(view, w),
        _spent(view, w),
        _stopped(view, w),
        el("p", {"class": "kept-report"}, _kept(view.kept, w)) if view.kept else None,
    ]
    if view.plan is None and not view.workers:
        sections.insert(0, el("p", {}, w["nothing_yet"]))
    return el("div", {"id": "progress-inner"}, *sections)


def _kept(kept: EarlierReportKept, w: dict[str, str]) -> str:
    """Which round's report the reader is given, when it is not the last round's."""
    score = f"{kept.score:.0f}"  # a whole number, as every score is shown
    if kept.revised_with:
        later = ", ".join(map(str, kept.revised_with))
        return w["kept_revised"].format(round=kept.round, score=score, later=later)
    return w["kept_report"].format(round=kept.round, score=score)


def _parent_link(view: RunView, w: dict[str, str]) -> Any:
    """For a follow-up: a link to the run it follows (or nothing)."""
    if not view.parent:
        return None
    link = el("a", {"href": f"/runs/{view.parent}"}, view.parent)
    return el("p", {"class": "thread"}, f"{w['follow_up_of']} ", link)


def run_page(
    view: RunView, lang: UiLanguage, csrf: str, follow_error: str = "", extra: list | None = None
) -> str:
    """The run page: everything so far, then live updates over server-sent events; `extra`
    (parts of other modules: keeping a finished report true) after them."""
    w = words(lang)
    base = f"/runs/{view.thread_id}"
    stream = (
        {
            "hx-ext": "sse",
            "sse-connect": f"{base}/events?after={view.last_seq}&lang={lang}",
            "sse-close": "end",
        }
        if view.status in LIVE
        else {}
    )
    body = [
        el("h1", {"dir": "auto"}, view.question or view.thread_id),
        el("p", {"class": "thread"}, f"{w['run_of']} {view.thread_id}"),
        _parent_link(view, w),
        el(
            "div",
            {"id": "live", **stream},
            el("p", {"class": "lost-note"}, w["lost"]) if stream else None,
            el(
                "div",
                {
                    "id": "controls",
                    "role": "status",
                    "aria-live": "polite",
                    "sse-swap": "controls" if stream else None,
                },
                controls(view, lang, csrf),
            ),
            el("noscript", {}, el("p", {"class": "hint"}, w["no_script"])) if stream else None,
            el(
                "div",
                {"id": "progress", "sse-swap": "progress" if stream else None},
                progress(view, lang, csrf, follow_error),
            ),
        ),
        *(extra or []),
    ]
    return page(
        view.question or view.thread_id, body, lang, csrf, base, refresh=bool(stream), wide=True
    )


def _when(created_at: str | None) -> str:
    """A checkpoint time as `YYYY-MM-DD HH:MM` UTC."""
    if not created_at:
        return "-"
    return datetime.fromisoformat(created_at).astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def _history_search(wanted: HistoryFilter, w: dict[str, str]) -> Any:
    """The history's search form (a GET: it works without script, and the address keeps it)."""
    statuses = [("", w["any_status"]), *((st, w[f"s_{st}"]) for st in STATUSES)]
    status_options = [
        el("option", {"value": v, "selected": "selected" if v == wanted.status else None}, text)
        for v, text in statuses
    ]
    return el(
        "form",
        {"method": "get", "action": "/runs", "class": "history-search", "role": "search"},
        el(
            "div",
            {},
            el("label", {"for": "q"}, w["search_questions"]),
            el("input", {"type": "search", "id": "q", "name": "q", "value": wanted.words or None}),
        ),
        el(
            "div",
            {},
            el("label", {"for": "status"}, w["status"]),
            el("select", {"id": "status", "name": "status"}, *status_options),
        ),
        el(
            "div",
            {},
            el("label", {"for": "since"}, w["since"]),
            el(
                "input",
                {"type": "date", "id": "since", "name": "since", "value": wanted.since or None},
            ),
        ),
        el("button", {"type": "submit"}, w["filter"]),
    )


def history_page(
    rows: list[dict[str, Any]],
    lang: UiLanguage,
    csrf: str,
    wanted: HistoryFilter | None = None,
    total: int | None = None,
) -> str:
    """The runs the user may see (status, score, cost, stop reason), narrowed by the search
    form (`total`: how many there are before it): open, resume, export, delete."""
    w = words(lang)
    wanted = wanted or HistoryFilter()
    total = len(rows) if total is None else total
    top = [el("h1", {}, w["history"])]
    if total:
        top.append(_history_search(wanted, w))
    if wanted.active:
        top.append(el("p", {"role": "status"}, w["shown_of"].format(shown=len(rows), total=total)))
    if not rows:
        empty = w["no_match"] if total else w["no_runs"]
        return page(w["history"], [*top, el("p", {}, empty)], lang, csrf, "/runs")
    head = [w["question"], w["status"], w["score"], w["cost"], w["stop_reason"], w["started"], ""]
    body_rows = []
    for row in rows:
        base = f"/runs/{row['thread_id']}"
        actions = [el("a", {"href": base}, w["open"])]
        if row["status"] == "done":
            actions.append(el("a", {"href": f"{base}/export.html"}, w["export"]))
        if row["status"] in ("stopped", "failed", "unfinished"):
            actions.append(_post_button(f"{base}/resume", w["resume"], csrf))
        actions.append(
            _post_button(f"{base}/delete", w["delete"], csrf, "danger", w["delete_confirm"])
        )
        body_rows.append(
            el(
                "tr",
                {},
                el(
                    "td",
                    {"dir": "auto"},
                    el("a", {"href": base}, row["question"] or row["thread_id"]),
                ),
                el("td", {}, w[f"s_{row['status']}"]),
                el("td", {}, row["score"]),
                el("td", {}, row["cost"]),
                el("td", {}, w.get(row["stop_reason"], row["stop_reason"]) or "-"),
                el("td", {}, _when(row["created_at"])),
                el("td", {"class": "actions"}, *actions),
            )
        )
    table = el(
        "div",
        {"class": "table", "role": "region", "aria-label": w["history"], "tabindex": "0"},
        el(
            "table",
            {"class": "history"},
            el("thead", {}, el("tr", {}, *(el("th", {"scope": "col"}, h) for h in head))),
            el("tbody", {}, *body_rows),
        ),
    )
    return page(w["history"], [*top, table], lang, csrf, "/runs")


def message_page(title: str, text: str, lang: UiLanguage, csrf: str, path: str) -> str:
    """A page that says one thing (an unknown run, a refused request)."""
    return page(title, [el("h1", {}, title), el("p", {}, text)], lang, csrf, path)
