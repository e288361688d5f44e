"""A refusal of the run service, said in the web form's words: the service words its refusals
for every door (a setting's name, the operator's command-line flag), while the person at the
form knows its fields and nothing of the server's command line."""

from __future__ import annotations

import re

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


def form_words(message: str) -> str:
    """The service's refusal as the form says it: what this server allows, in the form's
    terms; a message with no setting name or flag in it is kept as it is."""
    if found := CEILING.match(message):
        name = found["name"] or found["moved"]
        ceiling = found["ceiling"]
        if name in ("max_iterations", "min_iterations"):
            return f"this server runs at most {ceiling} research rounds: choose a smaller depth"
        return f"this server allows at most {ceiling} {WHAT.get(name, '')}: ask for less".replace(
            "  ", " "
        )
    if found := INCLUDED.match(message):
        return f"this server searches only {found['only']}: name those sites or their subdomains"
    if found := EXCLUDED.match(message):
        return f"this server never searches {found['kept']}: keep them in the list"
    if found := WIDER.match(message):
        span = SPANS.get(found["span"], found["span"])
        return f"this server uses only sources from {span}: choose that or a shorter time"
    if found := NO_KEY.match(message):
        if found["name"] == "OPENAI":
            return "this server has no key for its model: tell whoever runs it"
        return f"this server has no {found['name'].title()} key: choose another search"
    if message.startswith("corpus_dir: this server has no corpus folder"):
        return "this server has no document folder to search"
    if message.startswith("corpus_dir: "):
        return message.removeprefix("corpus_dir: ").replace("corpus folder", "document folder")
    plain = FLAG_HINT.sub("", INVALID.sub("", message))
    return SETTING.sub(lambda name: NAMES[name[0]], plain)
