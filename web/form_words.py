"""A refusal of the run service, said in the web form's words: the service words its refusals
for every door (a setting's name, the operator's command-line flag), while the person at the
form knows its fields and nothing of the server's command line."""

from __future__ import annotations

import re

from deep_research.web.labels import UiLanguage

CEILING = re.compile(
    r"^(?:options\.(?P<name>\w+) (?P<value>\S+)|options raise (?P<moved>\w+) to (?P<to>\S+)) "
    r"is above this server's ceiling (?P<ceiling>\S+) \(--[^)]*\); ask for \S+ or less$"
)
INCLUDED = re.compile(r"^include_domains .* outside this server's include_domains (?P<only>.*) \(")
EXCLUDED = re.compile(r"^exclude_domains drops this server's (?P<kept>.*) \(")
WIDER = re.compile(r"^time_range \S+ is wider than this server's (?P<span>\w+) \(")
FLAG_HINT = re.compile(
    r"\s*\((?:start it with |set by )?--[^)]*\)|;? (?:or )?(?:use|with) --\S+.*$"
)
NO_KEY = re.compile(r"^(?P<name>[A-Z]+)_API_KEY is not set")
INVALID = re.compile(r"^invalid setting (?:options\.|settings\.)?\w+: ")

WHAT = {
    "max_iterations": "research rounds",
    "min_iterations": "research rounds",
    "max_total_tokens": "tokens",
    "max_search_calls": "searches",
    "max_workers": "subtasks at once",
    "quality_threshold": "as the quality to reach",
}
NAMES = {
    "min_iterations": "the fewest rounds",
    "max_iterations": "the most rounds",
    "max_total_tokens": "the token budget",
    "max_search_calls": "the search budget",
    "max_workers": "the subtasks at once",
    "quality_threshold": "the quality to reach",
    "search_backend": "the search",
    "corpus_dir": "the document folder",
    "include_domains": "the sites to search",
    "exclude_domains": "the sites never searched",
    "time_range": "the time sources are from",
    "report_length": "the report length",
}
SETTING = re.compile("|".join(rf"\b{name}\b" for name in NAMES))
SPANS = {"day": "the last day", "week": "the last week", "month": "the last month"}
SPANS["year"] = "the last year"
QUESTION_TOO_LONG = re.compile(
    r"^the question is (?P<n>\d+) characters long; the limit is (?P<max>\d+)$"
)

ZH = {
    "rounds": "此服务器最多进行 {ceiling} 轮研究：请选择较浅的深度",
    "at_most": "此服务器最多允许{what} {ceiling}：请少要一些",
    "only": "此服务器只搜索 {only}：请填写这些网站或其子域名",
    "never": "此服务器从不搜索 {kept}：请把它们留在列表中",
    "span": "此服务器只使用{span}的来源：请选择它或更短的时间",
    "no_model_key": "此服务器没有其模型的密钥：请告诉它的管理员",
    "no_search_key": "此服务器没有 {name} 密钥：请选择其他搜索方式",
    "no_folder": "此服务器没有可搜索的文档文件夹",
    "empty": "问题是空的",
    "too_long": "问题有 {n} 个字符，上限是 {max}",
}
WHAT_ZH = {
    "max_total_tokens": "的令牌数",
    "max_search_calls": "的搜索次数",
    "max_workers": "同时进行的子任务数",
    "quality_threshold": "的质量目标",
}
SPANS_ZH = {"day": "最近一天", "week": "最近一周", "month": "最近一个月", "year": "最近一年"}


def form_words(message: str, lang: UiLanguage = "en") -> str:
    """The service's refusal as the form says it, in the page's language: what this server
    allows, in the form's terms; a message with no setting name or flag in it is kept as it is
    (in English: the service words it, and only the refusals above have Chinese words)."""
    zh = lang == "zh"
    if found := CEILING.match(message):
        name = found["name"] or found["moved"]
        ceiling = found["ceiling"]
        if name in ("max_iterations", "min_iterations"):
            if zh:
                return ZH["rounds"].format(ceiling=ceiling)
            return f"this server runs at most {ceiling} research rounds: choose a smaller depth"
        if zh:
            return ZH["at_most"].format(ceiling=ceiling, what=WHAT_ZH.get(name, ""))
        return f"this server allows at most {ceiling} {WHAT.get(name, '')}: ask for less".replace(
            "  ", " "
        )
    if found := INCLUDED.match(message):
        if zh:
            return ZH["only"].format(only=found["only"])
        return f"this server searches only {found['only']}: name those sites or their subdomains"
    if found := EXCLUDED.match(message):
        if zh:
            return ZH["never"].format(kept=found["kept"])
        return f"this server never searches {found['kept']}: keep them in the list"
    if found := WIDER.match(message):
        if zh:
            return ZH["span"].format(span=SPANS_ZH.get(found["span"], found["span"]))
        span = SPANS.get(found["span"], found["span"])
        return f"this server uses only sources from {span}: choose that or a shorter time"
    if found := NO_KEY.match(message):
        if found["name"] == "OPENAI":
            return (
                ZH["no_model_key"]
                if zh
                else "this server has no key for its model: tell whoever runs it"
            )
        if zh:
            return ZH["no_search_key"].format(name=found["name"].title())
        return f"this server has no {found['name'].title()} key: choose another search"
    if message.startswith("corpus_dir: this server has no corpus folder"):
        return ZH["no_folder"] if zh else "this server has no document folder to search"
    if zh and message == "the question is empty":
        return ZH["empty"]
    if zh and (found := QUESTION_TOO_LONG.match(message)):
        return ZH["too_long"].format(n=found["n"], max=found["max"])
    if message.startswith("corpus_dir: "):
        return message.removeprefix("corpus_dir: ").replace("corpus folder", "document folder")
    plain = FLAG_HINT.sub("", INVALID.sub("", message))
    return SETTING.sub(lambda name: NAMES[name[0]], plain)
