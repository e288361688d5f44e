"""Admission: the one list of checks a run passes before any paid call, the same for every door.

A run's settings are the operator's (the process that admits and executes it: its flags, config
file and environment), narrowed by what the caller asked: a remote door's caller (MCP, web) only
through `ResearchOptions` and never above the operator's ceilings; the terminal's user is the
operator. Settings a run inherits (a follow-up's parent's, a resumed run's own) are brought within
the operator's ceilings the same way. What the process reads, fetches and starts (`SERVER_ONLY`:
folders, private reads, MCP configs) is always the executing process's own, never a stored
request's or a job row's. Then the checks with I/O, none of them paid: keys, the model server
answers, the corpus indexes, the MCP sources file reads, the model names exist.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from deep_research.service.bad_input import BadInput
from deep_research.service.model_list import ModelList
from deep_research.service.options import (
    CorpusOutside,
    ResearchOptions,
    corpus_inside,
    over_a_ceiling,
    within_server,
)
from deep_research.service.preflight import (
    check_corpus,
    check_credentials,
    check_mcp_config,
    check_model_endpoint,
    check_question,
    needs_model_endpoint,
    settings_or_explain,
)
from deep_research.service.setting_sources import FLAGS
from deep_research.settings import GUARD_NOTE, SERVER_ONLY, Settings
from deep_research.tools.search.factory import web_provider


@dataclass(frozen=True)
class Admitted:
    """A run that passed admission: its question and settings, and what was noted on the way."""

    question: str
    settings: Settings
    notes: tuple[str, ...] = ()


@dataclass
class Operator:
    """What the process that admits and executes runs allows.

    `given`: the operator's settings as set (flags, config file, environment; the rest adapt
    to them, e.g. a local model's profile). `remote`: callers are not the operator (MCP, web):
    they narrow it through `ResearchOptions` only, within its ceilings. `unattended`: nobody
    answers a plan (MCP, the queue). `strict`: a stored run whose server-only settings differ
    from this process's is refused rather than run with this process's (the terminal: its user
    should say which folder or command, not find another one used).
    """

    given: dict[str, Any] = field(default_factory=dict)
    remote: bool = False
    unattended: bool = False
    strict: bool = False
    settings: Settings = field(init=False)
    _checked: set[Any] = field(default_factory=set, init=False)  # what the free checks passed

    def __post_init__(self) -> None:
        self.settings = settings_or_explain(self.given)

    @classmethod
    def of(cls, settings: Settings, **how: bool) -> Operator:
        """The operator whose settings are `settings` (those it set explicitly count as set)."""
        return cls(settings.model_dump(include=settings.model_fields_set), **how)


def _flag(name: str) -> str:
    """How a command is given a server-only setting again, for messages: its flag, else
    `--set` (which `resume` and `ask` take for these)."""
    return next((flag.option for flag in FLAGS if flag.field == name), f"--set {name}=...")


class Admission:
    """Admit runs for one operator; the checks that cost a connection are done once each."""

    def __init__(self, operator: Operator, notes: Callable[[str], None] = lambda text: None):
        self.operator = operator
        self.note = notes
        self._one_at_a_time = asyncio.Lock()  # calls at once probe a provider once, not each

    async def new_run(
        self,
        question: str,
        asked: ResearchOptions | Settings,
        door_checks: Callable[[], None] | None = None,
        ask_back: bool = False,
    ) -> Admitted:
        """A new run: `asked` is a remote caller's options, or the terminal's own settings.
        `door_checks` (a door's own, e.g. that its store opens) run before the one check that
        sends the model server a request, so that nothing is asked of it for a run that
        cannot start. `ask_back`: a remote caller answers questions asked back before research
        (the run then waits for them when the question is vague)."""
        question = check_question(question)
        if isinstance(asked, ResearchOptions):
            settings = self._narrowed(asked, plan_approval=False, ask_back=ask_back)
        else:
            settings = asked
        return await self._checked(question, settings, door_checks)

    async def web_run(
        self, question: str, options: ResearchOptions, approve_plan: bool, ask_back: bool = True
    ):
        """A new run from the web form, which may also ask to approve its plan, and to be
        asked back first when the question is vague."""
        question = check_question(question)
        settings = self._narrowed(options, plan_approval=approve_plan, ask_back=ask_back)
        return await self._checked(question, settings)

    async def inherited(self, question: str, settings: Settings) -> Admitted:
        """A run whose settings come from another run (a follow-up's parent's, a resumed run's
        own): within the operator's ceilings, with this process's server-only settings."""
        return await self._checked(question, self.executing(settings))

    def executing(self, stored: Settings) -> Settings:
        """The settings this process runs a stored run with: its own server-only settings,
        and for remote callers its own models and ceilings (`within_server`); BadInput for
        a strict operator whose server-only settings differ from the stored run's."""
        operator = self.operator.settings
        own = {name: getattr(operator, name) for name in SERVER_ONLY}
        if self.operator.remote:
            asked = {name: getattr(stored, name) for name in ResearchOptions.model_fields}
            asked = {k: v for k, v in asked.items() if v is not None and k != "corpus_dir"}
            base = settings_or_explain({**self.operator.given, **asked})
            narrowed = within_server(operator, base)
            inside = _inside_or_none(stored.corpus_dir, operator.corpus_dir)
            asks = {"approve_plan": stored.approve_plan, "clarify": stored.clarify}
            values = {**narrowed.model_dump(), **own, **asks}
            if inside:
                values["corpus_dir"] = inside
            return Settings.model_validate(values)
        differ = [n for n in SERVER_ONLY if getattr(stored, n) != own[n]]
        if differ and self.operator.strict:
            shown = ", ".join(f"{n} {getattr(stored, n)!r} ({_flag(n)})" for n in differ)
            raise BadInput(
                f"the run was started with {shown}: folders, commands and private reads come "
                "only from the command that runs it, never from the store; give them again"
            )
        return stored.model_copy(update=own)

    def _narrowed(self, options: ResearchOptions, plan_approval: bool, ask_back: bool) -> Settings:
        """The operator's settings narrowed by a remote caller's options, or BadInput; questions
        are asked back only when the caller will answer them and the operator allows it."""
        overrides = options.overrides()
        try:
            if "corpus_dir" in overrides:
                root = self.operator.settings.corpus_dir
                overrides["corpus_dir"] = corpus_inside(overrides["corpus_dir"], root)
        except CorpusOutside as error:
            raise BadInput(str(error)) from None
        asks = {
            "approve_plan": plan_approval,
            "clarify": ask_back and self.operator.settings.clarify,
        }
        given = {**self.operator.given, **overrides, **asks}
        settings = settings_or_explain(given)
        beyond = over_a_ceiling(self.operator.settings, settings, set(overrides))
        if beyond:
            raise BadInput(beyond)
        return settings

    async def _checked(
        self, question: str, settings: Settings, door_checks: Callable[[], None] | None = None
    ) -> Admitted:
        """Every check with I/O, none paid; the notes a door may show."""
        async with self._one_at_a_time:
            return await self._checked_now(question, settings, door_checks)

    async def _checked_now(
        self, question: str, settings: Settings, door_checks: Callable[[], None] | None
    ) -> Admitted:
        """`_checked`, for one caller at a time."""
        if settings.approve_plan and self.operator.unattended:
            raise BadInput(
                "these runs are unattended (nobody answers a plan): approve_plan cannot be on"
            )
        if settings.clarify and self.operator.unattended and not self.operator.remote:
            # nobody answers questions asked back here (a queue's runs, batches)
            settings = settings.model_copy(update={"clarify": False})
        notes: list[str] = []
        checked = ("credentials", web_provider(settings), tuple(_models(settings)))
        asks_the_model_server = checked not in self.operator._checked
        if asks_the_model_server:
            await asyncio.to_thread(check_credentials, settings)
            if needs_model_endpoint(settings):
                await asyncio.to_thread(check_model_endpoint)  # a connection, no request
        if settings.corpus_dir and settings.search_backend in ("local", "hybrid"):
            await asyncio.to_thread(check_corpus, settings, _Collect(notes))
        check_mcp_config(settings)
        if door_checks is not None:
            await asyncio.to_thread(door_checks)
        if asks_the_model_server:
            if needs_model_endpoint(settings):  # last: the one check that sends a request
                await asyncio.to_thread(ModelList().check, settings)
            self.operator._checked.add(checked)
        if settings.fetch_private_addresses:
            notes.append(GUARD_NOTE)
        for text in notes:
            self.note(text)
        return Admitted(question, settings, tuple(notes))


def _models(settings: Settings) -> list[str]:
    """Every model name the run's roles use."""
    from deep_research.settings import ROLES

    return sorted({settings.model_for(role) for role in ROLES})


def _inside_or_none(asked: str | None, root: str | None) -> str | None:
    """A stored corpus folder when it is the operator's or inside it, else None."""
    try:
        return corpus_inside(asked, root) if asked and root else None
    except CorpusOutside:
        return None


class _Collect:
    """Notes gathered into a list."""

    def __init__(self, into: list[str]) -> None:
        self.into = into

    def note(self, text: str) -> None:
        self.into.append(text)
