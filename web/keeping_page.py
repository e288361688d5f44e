"""The run page's part on keeping a finished report true: a button that re-checks its sources
and the last re-check (each claim's state, the quote kept then and the new text's words), a form
that watches the question on a schedule (or stops watching it), and each version's change list.

Plain forms that POST with the page's anti-forgery token: it works without script. Every
statement, quote, title and address came from outside and goes in as text (escaped when the
tree is written); addresses are shown, never linked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from deep_research.export.html_page import el
from deep_research.state import ChangeList, CitedClaim, ClaimRecheck, Recheck, SourceRecheck
from deep_research.tools.watches import Version, Watch
from deep_research.web.labels import UiLanguage
from deep_research.web.pages import _csrf, _post_button, _table

TEXT_CHARS = 400  # a statement or quote as shown, at most
CHANGED_FIRST = ("quote_gone", "page_gone", "unreachable", "quote_kept", "not_rechecked")

EN: dict[str, str] = {
    "keeping": "Keeping this report true",
    "recheck": "Re-check sources",
    "recheck_hint": "Reads every cited source again (a page that did not change costs nothing) "
    "and sorts every cited claim.",
    "rechecked": "Re-checked {when}: {claims}, {requests} ({not_modified} not modified), "
    "{model_calls}, {seconds} s.",
    "claims_1": "{n} cited claim",
    "claims_n": "{n} cited claims",
    "requests_1": "{n} request",
    "requests_n": "{n} requests",
    "model_calls_1": "{n} model call",
    "model_calls_n": "{n} model calls",
    "claims": "Cited claims, as their sources stand now",
    "sources": "Sources read again",
    "n": "No.",
    "claim": "Claim",
    "state": "Now",
    "quote_then": "Quote when read",
    "quote_now": "The new text says",
    "answer": "Answer",
    "address": "Address",
    "title": "Title",
    "checked_again": "checked again: {verdict}",
    "c_unchanged": "unchanged",
    "c_quote_kept": "page changed, quote still there",
    "c_quote_gone": "quote gone",
    "c_page_gone": "page gone",
    "c_unreachable": "unreachable now",
    "c_not_rechecked": "not re-checked (a tool's answer)",
    "s_unchanged": "unchanged",
    "s_changed": "changed",
    "s_moved": "redirects elsewhere",
    "s_gone": "gone",
    "s_unreachable": "unreachable now",
    "s_not_rechecked": "not re-checked",
    "no_answer": "no answer",
    "not_modified": "not modified",
    "watch": "Watch this question",
    "watch_hint": "Research it again on a schedule, each version a follow-up of the last one, "
    "with a list of what changed. Versions are made by the queue's workers, or by "
    "`deep-research watch --run-due` from a system timer.",
    "every": "Every",
    "every_hint": "30m, 12h, 7d, 2w or 1d12h",
    "start_watch": "Watch",
    "stop_watch": "Stop watching",
    "watched": "Watched every {every}: version {version} is the latest; the next is due {due}.",
    "making": "Version {version} is being made.",
    "note": "Note: {note}",
    "versions": "Versions",
    "version": "Version {version}",
    "version_of": "made {when}, against {previous}",
    "nothing_changed": "Nothing changed.",
    "not_finished": "Not finished yet.",
    "figures": "Figures that changed",
    "before": "before",
    "now": "now",
    "new_findings": "New findings",
    "unsupported": "No longer supported",
    "why": "why",
    "sources_gone": "Sources gone",
    "left_out": "Left out (their sources still say them)",
    "unresolved": "Not compared (no valid reading came from the model)",
}

ZH: dict[str, str] = {
    "keeping": "让报告保持真实",
    "recheck": "重新核查来源",
    "recheck_hint": "重新读取每个被引用的来源（未变化的页面不产生费用），并为每条引用的论断分类。",
    "rechecked": "核查于 {when}：{claims}，{requests}（{not_modified} 次未修改），{model_calls}，"
    "{seconds} 秒。",
    "claims_1": "{n} 条引用论断",
    "claims_n": "{n} 条引用论断",
    "requests_1": "{n} 次请求",
    "requests_n": "{n} 次请求",
    "model_calls_1": "{n} 次模型调用",
    "model_calls_n": "{n} 次模型调用",
    "claims": "引用的论断，按其来源现在的状态",
    "sources": "重新读取的来源",
    "n": "编号",
    "claim": "论断",
    "state": "现在",
    "quote_then": "读取时的引文",
    "quote_now": "新文本的说法",
    "answer": "应答",
    "address": "地址",
    "title": "标题",
    "checked_again": "重新核查：{verdict}",
    "c_unchanged": "未变化",
    "c_quote_kept": "页面已变，引文仍在",
    "c_quote_gone": "引文已不在",
    "c_page_gone": "页面已删除",
    "c_unreachable": "暂时无法访问",
    "c_not_rechecked": "未重新核查（工具的回答）",
    "s_unchanged": "未变化",
    "s_changed": "已变化",
    "s_moved": "重定向到别处",
    "s_gone": "已删除",
    "s_unreachable": "暂时无法访问",
    "s_not_rechecked": "未重新核查",
    "no_answer": "无应答",
    "not_modified": "未修改",
    "watch": "关注这个问题",
    "watch_hint": "按计划重新研究，每个版本都是上一版本的追问，并附有变化清单。版本由队列的 worker "
    "生成，或由系统定时器调用 `deep-research watch --run-due` 生成。",
    "every": "间隔",
    "every_hint": "30m、12h、7d、2w 或 1d12h",
    "start_watch": "关注",
    "stop_watch": "停止关注",
    "watched": "每 {every} 关注一次：最新为第 {version} 版；下一版于 {due} 到期。",
    "making": "正在生成第 {version} 版。",
    "note": "备注：{note}",
    "versions": "版本",
    "version": "第 {version} 版",
    "version_of": "生成于 {when}，对比 {previous}",
    "nothing_changed": "没有变化。",
    "not_finished": "尚未完成。",
    "figures": "变化的数字",
    "before": "之前",
    "now": "现在",
    "new_findings": "新发现",
    "unsupported": "不再有依据",
    "why": "原因",
    "sources_gone": "已消失的来源",
    "left_out": "未再写入（来源仍这样说）",
    "unresolved": "未比较（模型未给出有效判断）",
}


def keeping_words(language: UiLanguage) -> dict[str, str]:
    """This part's label set for a page language."""
    return ZH if language == "zh" else EN


@dataclass(frozen=True)
class Kept:
    """What the part shows of a finished run: its last re-check, its watch and versions."""

    thread_id: str
    recheck: Recheck | None = None
    watch: Watch | None = None
    versions: list[Version] = field(default_factory=list)
    error: str = ""  # why the last re-check or watch form was refused


def _short(text: str) -> str:
    """Outside text on one line, at most TEXT_CHARS."""
    line = " ".join(text.split())
    return line if len(line) <= TEXT_CHARS else line[: TEXT_CHARS - 1] + "…"


def _when(moment: float) -> str:
    """Unix seconds as `2026-12-05 07:12 UTC`."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _every(seconds: int) -> str:
    """A period in the form it is written in (`7d`, `1d12h`, `30m`)."""
    parts, left = [], seconds
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if left >= size:
            parts.append(f"{left // size}{unit}")
            left %= size
    return "".join(parts) or f"{seconds}s"


def _claim_state(claim: ClaimRecheck, w: dict[str, str]) -> Any:
    """A claim's state in words, with the verdict of a check run again."""
    state = el("strong", {"class": f"state {claim.state}"}, w[f"c_{claim.state}"])
    if not claim.verdict:
        return state
    return el("span", {}, state, el("br"), w["checked_again"].format(verdict=claim.verdict))


def _quote(text: str) -> Any:
    """A quote from outside, or nothing."""
    return el("q", {"dir": "auto"}, _short(text)) if text else ""


def _answer(source: SourceRecheck, w: dict[str, str]) -> str:
    """What the server answered, in words."""
    if source.status is None:
        answer = w["no_answer"]
    elif source.status == 304:
        answer = f"HTTP 304 ({w['not_modified']})"
    else:
        answer = f"HTTP {source.status}"
    return f"{answer} — {_short(source.note)}" if source.note else answer


def _counted(w: dict[str, str], noun: str, number: int) -> str:
    """A count with its noun in the page's language: "1 model call", "2 model calls"."""
    return w[f"{noun}_1" if number == 1 else f"{noun}_n"].format(n=number)


def recheck_part(recheck: Recheck, w: dict[str, str]) -> list:
    """The last re-check: counts, every claim (changed ones first), every source."""
    summary = w["rechecked"].format(
        when=recheck.checked,
        claims=_counted(w, "claims", len(recheck.claims)),
        requests=_counted(w, "requests", recheck.requests),
        not_modified=recheck.not_modified,
        model_calls=_counted(w, "model_calls", recheck.model_calls),
        seconds=f"{recheck.seconds:.1f}",
    )
    order = {state: n for n, state in enumerate((*CHANGED_FIRST, "unchanged"))}
    claims = sorted(recheck.claims, key=lambda c: (order[c.state], c.number))
    claim_rows = [
        [
            f"[{c.number}]",
            _short(c.statement),
            _claim_state(c, w),
            _quote(c.quote),
            _quote(c.new_quote),
        ]
        for c in claims
    ]
    source_rows = [
        [f"[{s.number}]", w[f"s_{s.state}"], _answer(s, w), _short(s.title), _short(s.url)]
        for s in recheck.sources
    ]
    head = [w["n"], w["claim"], w["state"], w["quote_then"], w["quote_now"]]
    return [
        el("p", {"id": "recheck-summary"}, summary),
        _table(w["claims"], head, claim_rows),
        _table(
            w["sources"], [w["n"], w["state"], w["answer"], w["title"], w["address"]], source_rows
        ),
    ]


def _cited(claim: CitedClaim) -> list:
    """A claim and its citations (number and address, as text)."""
    cites = " ".join(f"[{n}] {_short(url)}" for n, url in claim.sources)
    return [el("span", {"dir": "auto"}, _short(claim.claim)), el("small", {}, f" ({cites})")]


def _listed(title: str, items: list[list]) -> list:
    """A heading and a list, or nothing when the list is empty."""
    if not items:
        return []
    return [el("h5", {}, title), el("ul", {}, *(el("li", {}, *item) for item in items))]


def change_list_part(changes: ChangeList, w: dict[str, str]) -> list:
    """A version's change list, section by section."""
    if changes.empty and not changes.left_out and not changes.unresolved:
        return [el("p", {}, w["nothing_changed"])]
    figures = [
        [
            el("strong", {}, f"{_short(f.old_value)} → {_short(f.new_value)}"),
            el(
                "ul",
                {},
                el("li", {}, f"{w['before']}: ", *_cited(f.old)),
                el("li", {}, f"{w['now']}: ", *_cited(f.new)),
            ),
        ]
        for f in changes.changed_figures
    ]
    dropped = [
        [*_cited(d.claim), el("br"), f"{w['why']}: ", el("span", {"dir": "auto"}, _short(d.why))]
        for d in changes.no_longer_supported
    ]
    gone = [
        [f"[{s.number}] {w[f's_{s.state}']}, {_answer(s, w)}: {_short(s.title)} {_short(s.url)}"]
        for s in changes.sources_gone
    ]
    return [
        *_listed(w["figures"], figures),
        *_listed(w["new_findings"], [_cited(c) for c in changes.new_findings]),
        *_listed(w["unsupported"], dropped),
        *_listed(w["sources_gone"], gone),
        *_listed(w["left_out"], [_cited(c) for c in changes.left_out]),
        *_listed(w["unresolved"], [_cited(c) for c in changes.unresolved]),
    ]


def _version(version: Version, w: dict[str, str]) -> Any:
    """One version: its run, when it was made, its change list."""
    title = el(
        "h4",
        {},
        el(
            "a",
            {"href": f"/runs/{version.thread_id}"},
            w["version"].format(version=version.version),
        ),
    )
    if version.finished is None or not version.changes:
        return el("article", {"class": "version"}, title, el("p", {}, w["not_finished"]))
    changes = ChangeList.model_validate_json(version.changes)
    made = w["version_of"].format(when=changes.made, previous=changes.previous)
    return el(
        "article",
        {"class": "version", "id": f"version-{version.version}"},
        title,
        el("p", {"class": "hint"}, made),
        *change_list_part(changes, w),
    )


def watch_part(kept: Kept, w: dict[str, str], csrf: str) -> list:
    """The watch: its schedule and a stop button, or the form that starts one; its versions."""
    base = f"/runs/{kept.thread_id}"
    watch = kept.watch
    parts: list = [el("h3", {}, w["watch"])]
    if watch is None:
        attrs = {
            "id": "every",
            "name": "every",
            "required": "required",
            "maxlength": "20",
            "placeholder": "7d",
            "aria-describedby": "every-hint",
        }
        parts.append(
            el(
                "form",
                {"method": "post", "action": f"{base}/watch", "class": "watch-form"},
                _csrf(csrf),
                el("p", {"class": "hint"}, w["watch_hint"]),
                el("label", {"for": "every"}, w["every"]),
                el("p", {"id": "every-hint", "class": "hint"}, w["every_hint"]),
                el("input", attrs),
                el("button", {"type": "submit"}, w["start_watch"]),
            )
        )
    else:
        due = _when(watch.next_due)
        line = w["watched"].format(
            every=_every(watch.every_seconds), version=watch.version, due=due
        )
        parts.append(el("p", {"id": "watch-line"}, line))
        if watch.pending:
            parts.append(el("p", {}, w["making"].format(version=watch.version + 1)))
        if watch.note:
            parts.append(el("p", {"class": "hint"}, w["note"].format(note=watch.note)))
        parts.append(_post_button(f"{base}/unwatch", w["stop_watch"], csrf, "danger"))
    if kept.versions:
        newest_first = sorted(kept.versions, key=lambda v: -v.version)
        parts += [el("h3", {}, w["versions"]), *(_version(v, w) for v in newest_first)]
    return parts


def keeping_part(kept: Kept, lang: UiLanguage, csrf: str) -> Any:
    """The whole part, for a finished run's page."""
    w = keeping_words(lang)
    body: list = [
        el("h2", {"id": "keeping-title"}, w["keeping"]),
        el("p", {"class": "hint", "id": "recheck-hint"}, w["recheck_hint"]),
        el(
            "form",
            {"method": "post", "action": f"/runs/{kept.thread_id}/recheck", "class": "inline"},
            _csrf(csrf),
            el("button", {"type": "submit", "aria-describedby": "recheck-hint"}, w["recheck"]),
        ),
    ]
    if kept.error:
        body.append(el("p", {"class": "error", "role": "alert"}, kept.error))
    if kept.recheck is not None:
        body += recheck_part(kept.recheck, w)
    body += watch_part(kept, w, csrf)
    return el("section", {"id": "keeping", "aria-labelledby": "keeping-title"}, *body)
