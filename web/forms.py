"""The ask form and the plan form: what a person typed, checked before any paid call.

A caller sets only what `service.options.ResearchOptions` allows (the same subset an MCP caller
gets: rounds, budgets, language, where to search, a corpus inside the server's folder, source
filters, report length), plus plan approval, and never above the operator's settings: the
service's admission, as for every door. Each problem is reported against the field it came
from, so the page can show it beside that field.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ValidationError

from deep_research.service.admission import Admission, Admitted
from deep_research.service.bad_input import BadInput
from deep_research.service.options import (
    ResearchOptions,
)
from deep_research.service.preflight import (
    check_question,
)
from deep_research.state import ClarifyReply, SubTask, TaskPlan
from deep_research.web.form_words import form_words
from deep_research.web.labels import UiLanguage

Preset = Literal["quick", "standard", "thorough"]
PRESETS: dict[str, dict[str, Any]] = {
    "quick": {"max_iterations": 1, "min_iterations": 1},
    "standard": {"max_iterations": 3, "min_iterations": 2},
    "thorough": {"max_iterations": 5, "min_iterations": 2, "quality_threshold": 85},
}
"""What each depth sets (docs/web.md lists them); the server's settings fill in the rest."""
OPTION_FIELDS = (
    "language",
    "search_backend",
    "corpus_dir",
    "include_domains",
    "exclude_domains",
    "time_range",
    "report_length",
    "max_total_tokens",
    "max_search_calls",
)
MAX_NEW_SUBTASKS = 3  # empty rows the plan form offers for new subtasks


class FormErrors(ValueError):
    """What is wrong with a form, by field name ("" for the form as a whole)."""

    def __init__(self, errors: dict[str, str]) -> None:
        """Keep the errors; the message is the first one."""
        super().__init__(next(iter(errors.values()), "invalid form"))
        self.errors = errors


def _field_of(message: str) -> str:
    """The form field a preflight message is about ("" when none is)."""
    for name in OPTION_FIELDS:
        if name in message:
            return name
    if "search" in message.lower() or "key" in message.lower():
        return "search_backend"
    return ""


def options_of(form: dict[str, str]) -> ResearchOptions:
    """The options the form set (empty fields keep the server's), or FormErrors by field."""
    preset = form.get("preset") or "standard"
    if preset not in PRESETS:
        raise FormErrors({"preset": f"unknown depth {preset!r}"})
    given: dict[str, Any] = dict(PRESETS[preset])
    for name in OPTION_FIELDS:
        value = (form.get(name) or "").strip()
        if value:
            given[name] = value
    try:
        return ResearchOptions.model_validate(given)
    except ValidationError as error:
        errors: dict[str, str] = {}
        for item in error.errors():
            name = str(item["loc"][0]) if item["loc"] else ""
            errors.setdefault(name, item["msg"].removeprefix("Value error, "))
        raise FormErrors(errors) from None


async def checked_input(
    form: dict[str, str], admission: Admission, lang: UiLanguage = "en"
) -> Admitted:
    """The new run, admitted after every check that costs nothing (`service.admission`, the
    same as every door's); FormErrors naming the field of each problem, in the page's
    language where `form_words` has its words."""
    errors: dict[str, str] = {}
    try:
        check_question(form.get("question") or "")
    except BadInput as error:
        errors["question"] = form_words(str(error), lang)
    try:
        options = options_of(form)
    except FormErrors as error:
        raise FormErrors({**errors, **error.errors}) from None
    if errors:
        raise FormErrors(errors)
    try:
        return await admission.web_run(
            form.get("question") or "",
            options,
            approve_plan=form.get("approve_plan") == "on",
            ask_back=form.get("ask_back") == "on",
        )
    except BadInput as error:
        message = str(error)
        if message.startswith(("options.", "options raise")):  # above the operator's ceiling
            name = message.removeprefix("options.").split()[0]
            if message.startswith("options raise"):
                name = message.split()[2]
            field = name if name in OPTION_FIELDS else "preset"
            raise FormErrors({field: form_words(message, lang)}) from None
        raise FormErrors({_field_of(message): form_words(message, lang)}) from None


def edited_plan(form: Any, shown: dict[str, Any]) -> TaskPlan:
    """The plan as the form left it: rows changed or removed, new rows added; FormErrors if
    nothing is left. A changed description searches for itself; an unchanged one keeps its
    queries."""
    before = {task["id"]: task for task in shown["subtasks"]}
    tasks: list[SubTask] = []
    removed = set(form.getlist("remove"))
    for key in form.getlist("id"):
        text = (form.get(f"description-{key}") or "").strip()
        if key in removed or not text or not key.isdigit() or int(key) not in before:
            continue
        old = before[int(key)]
        queries = old["search_queries"] if text == old["description"] else [text]
        complexity = form.get(f"complexity-{key}") or old["complexity"]
        tasks.append(_subtask(len(tasks) + 1, text, queries, complexity))
    for n in range(MAX_NEW_SUBTASKS):
        text = (form.get(f"new-{n}") or "").strip()
        if text:
            tasks.append(_subtask(len(tasks) + 1, text, [text], form.get(f"new-complexity-{n}")))
    if not tasks:
        raise FormErrors({"plan": "a plan needs at least one subtask (or reject it)"})
    return TaskPlan(query_type=shown["query_type"], subtasks=tasks)


def _subtask(number: int, text: str, queries: list[str], complexity: str | None) -> SubTask:
    """One subtask of an edited plan (an unknown complexity is medium)."""
    level = complexity if complexity in ("simple", "medium", "complex") else "medium"
    return SubTask(id=number, description=text[:1000], search_queries=queries, complexity=level)


def clarify_reply(form: Any, questions: list[dict[str, Any]]) -> ClarifyReply:
    """The answers the form gave, one per question asked (own words win over a picked
    suggestion; none given is a skip), or a skip when the person chose to skip."""
    if form.get("action") == "skip":
        return ClarifyReply(action="skip")
    answers = []
    for n in range(len(questions)):
        own = (form.get(f"own-{n}") or "").strip()
        answers.append(own or (form.get(f"answer-{n}") or "").strip())
    return ClarifyReply(answers=answers) if any(answers) else ClarifyReply(action="skip")
