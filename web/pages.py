"""The web app's pages, built with the HTML export's element builder: every outside text (the
question, plan, titles, errors) goes in as text and is escaped when the tree is written."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from lxml import html as lxml_html

from deep_research.domain.labels import score_text
from deep_research.export.html_page import el
from deep_research.tools.events import EarlierReportKept
from deep_research.web.forms import MAX_NEW_SUBTASKS, PRESETS
from deep_research.web.labels import UiLanguage, words
from deep_research.web.view import RunView

LANGUAGES = ("en", "zh-Hans", "zh-Hant", "ja", "ko", "de", "fr", "es", "it", "pt", "nl", "ru")
BACKENDS = ("tavily", "bocha", "searxng", "duckduckgo", "local", "hybrid")
FORMATS = (("md", "Markdown"), ("html", "HTML"), ("docx", "Word"), ("pdf", "PDF"))
LIVE = ("queued", "running")
# htmx's own inline <style> and eval would break the page CSP (no inline style or script): off
HTMX_CONFIG = '{"includeIndicatorStyles": false, "allowEval": false, "allowScriptTags": false}'


def html_text(node: Any) -> str:
    """An element (or several) as HTML text."""
    nodes = node if isinstance(node, list) else [node]
    return "".join(lxml_html.tostring(n, encoding="unicode", method="html") for n in nodes)


def page(title: str, body: list, lang: UiLanguage, csrf: str, path: str) -> str:
    """A whole page: header with navigation, the body in `main`, scripts from this server."""
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
    main = el("main", {"id": "main", "tabindex": "-1"}, *body)
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


def _select(name: str, label: str, choices: list[tuple[str, str]], form, errors) -> list:
    """A labelled select with its error."""
    chosen = form.get(name, "")
    options = [
        el("option", {"value": v, "selected": "selected" if v == chosen else None}, text)
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
    lang: UiLanguage, csrf: str, form: dict[str, str], errors: dict[str, str], corpus: bool
) -> str:
    """The page that starts a run: the question, the depth, the common options."""
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
    languages = [("", w["auto"]), *((code, code) for code in LANGUAGES)]
    backends = [("", w["server_default"]), *((b, b) for b in BACKENDS)]
    spans = [("", w["any_time"]), *((s, w[s]) for s in ("day", "week", "month", "year"))]
    lengths = [("", w["server_default"]), ("brief", w["brief"])]
    lengths += [("standard", w["standard_length"]), ("long", w["long"])]
    options = [
        *_select("language", w["language"], languages, form, errors),
        *_select("search_backend", w["search_backend"], backends, form, errors),
        *_domains("include_domains", w["include_domains"], w["domains_hint"], form, errors),
        *_domains("exclude_domains", w["exclude_domains"], w["domains_hint"], form, errors),
        *_select("time_range", w["time_range"], spans, form, errors),
        *_select("report_length", w["report_length"], lengths, form, errors),
        *_number("max_total_tokens", w["max_total_tokens"], form, errors),
        *_number("max_search_calls", w["max_search_calls"], form, errors),
    ]
    if corpus or "corpus_dir" in errors:
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


def controls(view: RunView, lang: UiLanguage, csrf: str, follow_error: str = "") -> Any:
    """Status in words, and what a person can do now (stop, resume, read, answer the plan)."""
    w = words(lang)
    base = f"/runs/{view.thread_id}"
    parts: list = [
        el("p", {"class": f"status {view.status}", "id": "status-line"}, w[f"s_{view.status}"])
    ]
    if view.error:
        parts.append(el("p", {"class": "error"}, view.error))
    if view.status in LIVE:
        parts.append(_post_button(f"{base}/stop", w["stop"], csrf, "danger"))
    if view.status in ("stopped", "failed", "unfinished"):
        parts.append(_post_button(f"{base}/resume", w["resume"], csrf, "primary"))
    if view.status == "done":
        links = [el("a", {"href": f"{base}/report", "class": "button primary"}, w["report"])]
        downloads = [
            el("li", {}, el("a", {"href": f"{base}/export.{ext}", "download": ""}, name))
            for ext, name in FORMATS
        ]
        parts += [
            el("p", {}, *links),
            el(
                "nav",
                {"aria-label": w["downloads"]},
                el("h2", {}, w["downloads"]),
                el("ul", {"class": "downloads"}, *downloads),
            ),
            follow_up_form(view, lang, csrf, follow_error),
        ]
    if view.status == "waiting" and view.waiting_plan:
        parts.append(plan_form(view, lang, csrf))
    return el("div", {"id": "controls-inner"}, *parts)


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


def progress(view: RunView, lang: UiLanguage) -> Any:
    """The plan, a row per worker, each round's score and gaps, the citation check, spending."""
    w = words(lang)
    sections: list = []
    if view.plan is not None:
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
        sections.append(
            el(
                "section",
                {"aria-labelledby": "h-plan"},
                el("h2", {"id": "h-plan"}, w["plan"]),
                el("ol", {"class": "plan"}, *tasks),
            )
        )
    if view.workers:
        rows = [
            [
                str(r.round),
                f"{r.subtask_id}. {r.description}",
                w.get(f"w_{r.phase}", r.phase) + (f" — {r.error}" if r.error else ""),
                r.queries,
                r.cycles,
                "" if r.findings is None else str(r.findings),
                "" if r.sources is None else str(r.sources),
            ]
            for r in sorted(view.workers.values(), key=lambda r: (r.round, r.subtask_id))
        ]
        head = [
            w["round"],
            w["subtask"],
            w["status"],
            w["queries"],
            w["cycles"],
            w["findings"],
            w["sources"],
        ]
        sections.append(
            el(
                "section",
                {"aria-labelledby": "h-workers"},
                el("h2", {"id": "h-workers"}, w["workers"]),
                _table(w["workers"], head, rows),
            )
        )
    if view.rounds:
        rows = [
            [
                str(r.round),
                score_text(r.score, unknown="-"),
                "; ".join(r.gaps + [f"→ {t}" for t in r.tasks]) or "-",
            ]
            for r in sorted(view.rounds.values(), key=lambda r: r.round)
        ]
        sections.append(
            el(
                "section",
                {"aria-labelledby": "h-rounds"},
                el("h2", {"id": "h-rounds"}, w["rounds"]),
                _table(w["rounds"], [w["round"], w["score"], w["gaps"]], rows),
            )
        )
    if view.citations is not None:
        c = view.citations
        share = "-" if c.precision is None else f"{c.precision:.0%}"
        line = w["cite_line"].format(
            checked=c.checked,
            supported=c.supported,
            share=share,
            removed=c.removed,
            rewritten=c.rewritten,
        )
        sections.append(
            el(
                "section",
                {"aria-labelledby": "h-cite"},
                el("h2", {"id": "h-cite"}, w["citations"]),
                el("p", {}, line),
            )
        )
    sections.append(
        el(
            "section",
            {"aria-labelledby": "h-spend"},
            el("h2", {"id": "h-spend"}, w["spending"]),
            _spending(view, w),
        )
    )
    if view.stop_reason:
        reason = w.get(view.stop_reason, view.stop_reason)
        sections.append(
            el(
                "section",
                {"aria-labelledby": "h-stop"},
                el("h2", {"id": "h-stop"}, w["stop_reason"]),
                el("p", {"class": "stop-reason"}, reason),
                *([el("p", {"class": "kept-report"}, _kept(view.kept, w))] if view.kept else []),
            )
        )
    if not sections:
        sections.append(el("p", {}, w["nothing_yet"]))
    return el("div", {"id": "progress-inner"}, *sections)


def _kept(kept: EarlierReportKept, w: dict[str, str]) -> str:
    """Which round's report the reader is given, when it is not the last round's."""
    score = f"{kept.score:g}"
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


def run_page(view: RunView, lang: UiLanguage, csrf: str, follow_error: str = "") -> str:
    """The run page: everything so far, then live updates over server-sent events."""
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
                controls(view, lang, csrf, follow_error),
            ),
            el(
                "div",
                {"id": "progress", "sse-swap": "progress" if stream else None},
                progress(view, lang),
            ),
        ),
    ]
    return page(view.question or view.thread_id, body, lang, csrf, base)


def _when(created_at: str | None) -> str:
    """A checkpoint time as `YYYY-MM-DD HH:MM` UTC."""
    if not created_at:
        return "-"
    return datetime.fromisoformat(created_at).astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def history_page(rows: list[dict[str, Any]], lang: UiLanguage, csrf: str) -> str:
    """Every run the user may see (status, score, cost, stop reason): open, resume, export,
    delete."""
    w = words(lang)
    if not rows:
        return page(
            w["history"],
            [el("h1", {}, w["history"]), el("p", {}, w["no_runs"])],
            lang,
            csrf,
            "/runs",
        )
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
    return page(w["history"], [el("h1", {}, w["history"]), table], lang, csrf, "/runs")


def message_page(title: str, text: str, lang: UiLanguage, csrf: str, path: str) -> str:
    """A page that says one thing (an unknown run, a refused request)."""
    return page(title, [el("h1", {}, title), el("p", {}, text)], lang, csrf, path)
