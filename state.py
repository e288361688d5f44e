"""The JSON contracts the steps pass each other, and the state schemas of both graphs.

Agents never chat: the planner hands workers `SubTask`s, workers hand back `WorkerResult`s whose
findings cite source ids, the reviewer answers with a `QualityAssessment` and a `GapAnalysis`.
The same Pydantic models are the structured-output schemas the models must fill.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal, NotRequired

from langgraph.channels import DeltaChannel
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.dataclasses import dataclass as pydantic_dataclass
from typing_extensions import TypedDict

from deep_research.settings import Complexity, Settings

QueryType = Literal["straightforward", "breadth_first", "depth_first"]
WorkerStatus = Literal["ok", "partial", "failed"]
ToolProtocol = Literal["native", "prompt", "fixed"]
"""How a worker chose its actions: native tool calls, tool calls in the prompt, or the fixed
search loop."""
StopReason = Literal[
    "max_iterations",
    "budget",
    "quality_threshold",
    "plateau",
    "declined",
    "not_worthwhile",
    "no_gaps",
    "no_evidence",
    "plan_rejected",
    "gaps_failed",
]
"""Why a research run ended (the stop rules' names, and the other ways out)."""
WorkerStopReason = Literal[
    "finished",  # the worker's model called `finish`
    "budget_spent",  # the subtask's queries or cycles are used up
    "search_failed",  # nothing came back and searches failed
    "run_budget_spent",  # the run's budget is spent (its siblings spent it)
    "model_error",  # the decide step's model call failed
    "no_gaps",  # the model found nothing missing
    "no_new_queries",  # every query worth sending was sent
]
"""Why a worker stopped searching."""


SCORE_SPREAD = 30  # how far an overall score may sit from the mean of its dimensions

# No maxLength/maxItems on the contracts: llama-cpp-python turns them into nested grammar rules,
# and a WorkerFindings schema bounded so (30 findings of 1,000 characters) made its grammar
# parser give up ("number of rules ... exceeds sane defaults") and the server process die.

# ---------------------------------------------------------------- asking back

MAX_CLARIFYING_QUESTIONS = 3  # asked at most, before any research is paid for


class ClarifyingQuestion(BaseModel):
    """One short question asked back before research, with answers the person may pick."""

    question: str = Field(min_length=1, description="One short question to the person asking.")
    suggested_answers: list[str] = Field(
        default_factory=list, description="2-4 short likely answers the person may pick."
    )


class Clarification(BaseModel):
    """The planner's judgement before research: is the question clear enough to research well,
    and if not, the few questions whose answers would change what to research."""

    needed: bool = Field(
        description="true only when the question is too vague to research well without asking."
    )
    questions: list[ClarifyingQuestion] = Field(
        default_factory=list,
        description=f"When needed: at most {MAX_CLARIFYING_QUESTIONS} questions; otherwise none.",
    )


class ClarifyReply(BaseModel):
    """The person's reply to clarifying questions (the value a caller resumes the run with):
    an answer per question in order ("" leaves one unanswered), or skip them all."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["answer", "skip"] = "answer"
    answers: list[str] = Field(default_factory=list)


class Clarified(BaseModel):
    """A question asked back and the person's answer: part of the run's brief."""

    question: str
    answer: str


# ---------------------------------------------------------------- planning


class SubTask(BaseModel):
    """One unit of research a single worker can finish on its own."""

    # What the model must supply has no default: `{}` is a failed reply, asked again, never a
    # plan. `id` and `perspective` may be left out: the planner step numbers the subtasks.

    id: int = Field(0, description="Unique number of the subtask within the run.")
    description: str = Field(
        min_length=1, description="What to find out, as a self-contained instruction."
    )
    search_queries: list[str] = Field(
        min_length=1, description="Web search queries to start with (2-4)."
    )
    complexity: Complexity = Field(description="Sets the worker's search budget.")
    perspective: str = Field("", description="For depth-first plans: the angle to take.")
    search_languages: list[str] = Field(
        default_factory=list,
        description="The languages the best sources for this subtask are written in, which "
        "its searches go out in (the question's own among them where sources in it exist).",
    )

    @field_validator("search_languages", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        """One language named alone ("English") is a list of one; at most 5 are kept."""
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list):
            names = [" ".join(str(v).split())[:40] for v in value if str(v).strip()]
            return list(dict.fromkeys(names))[:5]
        return value


class TaskPlan(BaseModel):
    """The planner's answer: how to route the question and how to split it (at least one)."""

    query_type: QueryType = Field(
        description="straightforward: one focused lookup; breadth_first: independent "
        "sub-questions; depth_first: several perspectives on one core question.",
    )
    # A worker count out of range (0) does not cost the plan: it is asked again, and left unset
    # (one worker per subtask) when the second answer is wrong too; never clamped in silence.
    NON_ESSENTIAL: ClassVar[tuple[str, ...]] = ("recommended_worker_count",)

    subtasks: list[SubTask] = Field(min_length=1)
    recommended_worker_count: int | None = Field(
        None, ge=1, description="Workers worth running in parallel."
    )


class PlanDecision(BaseModel):
    """A person's answer to a plan shown for approval."""

    action: Literal["approve", "edit", "reject"]
    plan: TaskPlan | None = Field(None, description="The edited plan, for action 'edit'.")


class Budget(BaseModel):
    """What one worker may spend: search queries and cycles of the fixed loop; when its model
    chooses tools, decide-act rounds, MCP tool calls and a cap on pages read whole (None: a
    fair share of the run's page budget, drawn as it needs them)."""

    max_queries: int = Field(ge=1)
    max_cycles: int = Field(ge=1)
    max_pages: int | None = Field(None, ge=0)
    max_mcp_calls: int = Field(2, ge=0)
    max_rounds: int = Field(6, ge=1)


# ---------------------------------------------------------------- evidence


class SearchHit(BaseModel):
    """One result of one search, as the backend returned it (content already compact)."""

    url: str
    title: str = ""
    content: str = ""
    score: float = 0.0
    query: str = ""
    published: str = ""  # the page's date as the provider gave it, when it gives one


class Source(BaseModel):
    """A registered source: the only URLs a report may cite."""

    id: int  # run-wide, stable: what `citations` and the checkpoints use
    url: str
    title: str = ""
    number: int | None = Field(
        None,
        description="The number the final report cites it by: 1..N in order of first citation.",
    )
    published: str = Field(
        "",
        description="When the source says it was published or last updated, as an ISO 8601 "
        "date (YYYY-MM-DD, or YYYY-MM / YYYY when that is all it says); '' when unknown.",
    )
    fetched: str = Field(
        "",
        description="When the run read the text its citations rest on, ISO 8601 UTC; '' when "
        "unknown (a search snippet).",
    )
    sha256: str = Field(
        "", description="The SHA-256 of that text as read (kept with the run); '' when none."
    )


class SourceEvidence(Source):
    """A source with the text the search returned for it, the ground truth for its citations."""

    excerpt: str = ""
    read: bool = Field(
        False, description="A worker read the page whole; its `quotes` are from the page text."
    )


# A slotted pydantic dataclass, as `PageLink` is a slotted one (see there): a run holds hundreds
# of quotes (worker results, the registry's copies, the pool), and a model instance is three
# objects (itself, its field dict, its set of fields given; 480 bytes) where this is one (56).
@pydantic_dataclass(frozen=True, slots=True)
class Quote:
    """Evidence that keeps its words: a passage of a page a worker read, copied verbatim, with
    the claim it supports. `source_id` is worker-local in a `WorkerResult` (the ids of its
    `sources`, like `Finding.source_ids`) and run-wide once `SourceRegistry` has absorbed it."""

    source_id: Annotated[int, Field(description="Id of the source the passage was copied from.")]
    text: Annotated[
        str, Field(min_length=1, description="The passage, word for word as the page has it.")
    ]
    claim: Annotated[str, Field(description="The claim the passage supports, in a sentence.")] = ""


class PageQuote(BaseModel):
    """One passage the model copied from a page, with the claim it supports."""

    text: str = Field(min_length=1, description="The passage, copied exactly from the page.")
    claim: str = Field("", description="What the passage shows, in one sentence.")


class PageQuotes(BaseModel):
    """What the researcher model is asked for when a worker reads a page: passages copied word
    for word that bear on its subtask, each with the claim it supports (none: nothing relevant)."""

    quotes: list[PageQuote]


# A slotted dataclass, which pydantic validates and dumps as it does a model (the same JSON): a
# worker holds up to 60 of each page it read, and a model instance is two objects (itself and
# its set of fields given) that every full garbage collection walks; this is one.
@dataclass(frozen=True, slots=True)
class PageLink:
    """A link a page offers: its absolute URL, its anchor text, the words around it, and whether
    it stands in the page's running text (not in a list of links, an aside or a footer)."""

    url: str
    text: str = ""
    context: str = ""
    in_text: bool = False


class ReadPage(BaseModel):
    """A page a worker read whole, kept compact: its quotes, the links it offers (the ones in
    its text first, those nearest the subtask first) and its date, not its text (every
    checkpoint stores state again)."""

    url: str
    title: str = ""
    quotes: list[PageQuote] = Field(default_factory=list)
    links: list[PageLink] = Field(default_factory=list, description="Its links, ranked.")
    published: str = ""  # the date the page states (ISO 8601), '' when it states none
    error: str = ""  # why nothing could be read ("" when read)

    @field_validator("links", mode="before")
    @classmethod
    def _bare_urls(cls, value: object) -> object:
        """Pages checkpointed before links had their words kept them as bare URLs."""
        if isinstance(value, list):
            return [{"url": v} if isinstance(v, str) else v for v in value]
        return value


class Finding(BaseModel):
    """One claim a worker found, citing the ids of the sources that support it."""

    claim: str = Field(min_length=1)
    source_ids: list[int] = Field(description="Ids of the evidence items that state the claim.")


class WorkerFindings(BaseModel):
    """What the researcher model is asked for at the end of a worker's loop (findings needed)."""

    # A self-rated confidence out of range (4 on a 0-1 scale) does not cost valid findings: it
    # is asked again, and recorded as unknown (None) when still wrong; never clamped.
    NON_ESSENTIAL: ClassVar[tuple[str, ...]] = ("confidence",)

    findings: list[Finding] = Field(min_length=1)
    summary: str = Field(min_length=1)
    gaps: list[str] = Field(description="What is still unknown (may be empty).")
    confidence: float | None = Field(None, ge=0, le=1, description="How sure you are, 0-1.")


class GapCheck(BaseModel):
    """A worker's decide step: what is still missing, and the queries that would find it
    (both empty: the evidence suffices)."""

    gaps: list[str]
    next_queries: list[str]


class WorkerResult(BaseModel):
    """What a worker hands back: findings citing its own `sources` by their local ids."""

    subtask_id: int
    round: int = 1
    description: str = ""
    status: WorkerStatus = "ok"
    findings: list[Finding] = Field(default_factory=list)
    summary: str = ""
    gaps: list[str] = Field(default_factory=list)
    confidence: float | None = 0.0  # None: the researcher gave no valid one
    queries_used: int = 0
    cycles_used: int = 0
    termination_reason: WorkerStopReason | None = None
    sources: list[SourceEvidence] = Field(default_factory=list)
    quotes: list[Quote] = Field(
        default_factory=list, description="Verbatim passages of the pages read, best first."
    )
    tools: ToolProtocol = Field(
        "fixed",
        description="How the worker chose its actions: native or prompt tool calling, "
        "or the fixed search loop (no tool calls, or a model that made none usable).",
    )
    pages_read: int = 0
    error: str = ""

    @field_validator("termination_reason", mode="before")
    @classmethod
    def _none_for_empty(cls, value: object) -> object:
        """Results checkpointed before the reason was typed wrote no reason as ""."""
        return value or None


# ---------------------------------------------------------------- review


Score = Annotated[float, Field(ge=0, le=100)]


class QualityDimensions(BaseModel):
    """The reviewer's sub-scores, each 0-100."""

    completeness: Score
    accuracy: Score
    depth: Score
    structure: Score
    readability: Score
    source_quality: Score

    def mean(self) -> float:
        """The average of the six sub-scores."""
        values = self.model_dump().values()
        return sum(values) / len(values)


class QualityAssessment(BaseModel):
    """The reviewer's verdict on a report: a 0-100 score in line with its six 0-100
    dimensions, the concrete issues, and whether another round is worth it."""

    # A score outside 0-100, or more than SCORE_SPREAD from the mean of its dimensions, is a
    # failed reply (asked again), never clamped: a score of 100 over six zeros means nothing.

    score: Score = Field(description="Overall quality, 0-100, in line with the dimensions.")
    dimensions: QualityDimensions
    issues: list[str] = Field(description="Concrete weaknesses.")
    another_round_worthwhile: bool = Field(
        description="Would one more research round improve the report materially?"
    )
    omitted: list[int] = Field(
        default_factory=list,
        description="Numbers of the unused evidence items the report should have used.",
    )
    other_entity: list[str] = Field(
        default_factory=list,
        description="Statements of the report, copied from it, that give facts about another "
        "entity than the one the question names (a similar name, another version or model).",
    )

    @model_validator(mode="after")
    def _score_matches_dimensions(self) -> QualityAssessment:
        mean = self.dimensions.mean()
        if abs(self.score - mean) > SCORE_SPREAD:
            raise ValueError(
                f"score {self.score:g} is inconsistent with its dimensions (mean {mean:.0f}); "
                f"the overall score must be within {SCORE_SPREAD} of their mean"
            )
        return self


class GapAnalysis(BaseModel):
    """What the report still lacks, and the subtasks that would fill it (both empty: nothing
    is missing)."""

    # Both lists empty is a decision, given explicitly; `{}` is a failed reply. Gaps named
    # without subtasks to fill them are asked again.

    gaps: list[str]
    supplementary_tasks: list[SubTask]

    @model_validator(mode="after")
    def _gaps_have_tasks(self) -> GapAnalysis:
        if self.gaps and not self.supplementary_tasks:
            raise ValueError("gaps are named but no supplementary_tasks would fill them")
        return self


class RoleUsage(BaseModel):
    """One role's model calls and tokens."""

    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: RoleUsage) -> RoleUsage:
        return RoleUsage(
            llm_calls=self.llm_calls + other.llm_calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )


# ---------------------------------------------------------------- sectioned writing


class OutlineSection(BaseModel):
    """One section of a report's outline: its heading, the question it answers, its evidence."""

    title: str = Field(min_length=1, description="The section's heading.")
    question: str = Field(min_length=1, description="The question this section answers.")
    source_ids: list[int] = Field(
        description="Ids of the numbered sources this section draws on (its own evidence)."
    )


class ReportOutline(BaseModel):
    """The writer's plan of a report: its sections, in reading order (the title is the
    question's own)."""

    sections: list[OutlineSection] = Field(min_length=1)


class ReportSection(OutlineSection):
    """A section as written: its outline entry, its Markdown text, and the round that wrote it."""

    text: str = ""
    round: int = 1


# ---------------------------------------------------------------- weighing the evidence

SetAsideReason = Literal["off_topic", "superseded", "other_entity"]


class Disagreement(BaseModel):
    """Figures about one thing that differ between sources."""

    subject: str = Field(
        min_length=1, description="What the differing figures are about (entity and measure)."
    )
    items: list[int] = Field(
        description="Numbers of the evidence items that give the differing figures (two or "
        "more, from different sources)."
    )
    current: int | None = Field(
        None,
        description="The item whose figure is current (its source is newer, or supersedes the "
        "others), or null when none can be said to be.",
    )
    why: str = Field("", description="Why that figure is current, or why none can be said to be.")


class SetAside(BaseModel):
    """An evidence item the report should not use as evidence for the question."""

    item: int = Field(description="The number of the evidence item.")
    reason: SetAsideReason = Field(
        description="off_topic: it does not bear on the question; superseded: a newer item "
        "replaces it; other_entity: it is about another product, version, place or person than "
        "the one the question names (a similar name is not the same entity)."
    )
    note: str = Field("", description="What it is about instead, or what supersedes it.")


class EvidenceWeighing(BaseModel):
    """The pass over the numbered evidence before writing: where sources disagree, and what to
    set aside (both empty: the evidence agrees and all of it bears on the question)."""

    disagreements: list[Disagreement]
    set_aside: list[SetAside]


class Conflict(BaseModel):
    """A disagreement between sources, its figures resolved to the run's evidence."""

    subject: str
    quotes: list[Quote] = Field(description="The differing figures, from two or more sources.")
    current: Quote | None = None  # the figure the weighing found current, if it found one
    why: str = ""


@pydantic_dataclass(frozen=True, slots=True, kw_only=True)
class SetAsideQuote(Quote):
    """A piece of evidence set aside, and why."""

    reason: SetAsideReason
    note: str = ""


class WeighedEvidence(BaseModel):
    """What the last weighing pass found, kept in run-wide terms (quotes, not item numbers)."""

    conflicts: list[Conflict] = Field(default_factory=list)
    set_aside: list[SetAsideQuote] = Field(default_factory=list)


# ---------------------------------------------------------------- citation checks

Verdict = Literal["supported", "partial", "unsupported"]


class CitationCheck(BaseModel):
    """One cited statement checked against one source it cites."""

    statement: str
    source_id: int
    verdict: Verdict
    evidence: str = Field("", description="The passage of the source that bears on it.")
    method: Literal["lexical", "model", "fallback"] = Field(
        "lexical",
        description="lexical: a close in-order copy (or an empty source); model: the reviewer "
        "judged it; fallback: no valid verdict came, so the citation was not kept.",
    )
    rewrite: bool = Field(False, description="The check of a statement the writer rewrote.")


class PairVerdict(BaseModel):
    """The model's verdict on one numbered (statement, source) pair."""

    pair: int = Field(description="The number of the pair.")
    verdict: Verdict
    quote: str = Field("", description="The words of the source that decide it, quoted exactly.")


class PairVerdicts(BaseModel):
    """The model's verdicts on a batch of pairs."""

    verdicts: list[PairVerdict] = Field(default_factory=list)


class StatementRewrite(BaseModel):
    """A statement rewritten from the evidence it has; empty text when that cannot be done."""

    statement: int = Field(description="The number of the statement.")
    text: str = Field("", description="The rewritten statement with its [n] citations, or empty.")


class StatementRewrites(BaseModel):
    """The writer's rewrites of statements whose citations failed."""

    rewrites: list[StatementRewrite] = Field(default_factory=list)


class Usage(BaseModel):
    """Calls and tokens as the servers reported them; added up across workers and rounds."""

    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    search_calls: int = 0
    search_cache_hits: int = 0
    page_fetches: int = 0  # whole pages fetched (counted when started; `max_page_fetches`)
    by_role: dict[str, RoleUsage] = Field(default_factory=dict)

    @classmethod
    def of_call(cls, role: str, input_tokens: int, output_tokens: int) -> Usage:
        """One answered model call of one role."""
        call = RoleUsage(llm_calls=1, input_tokens=input_tokens, output_tokens=output_tokens)
        return cls(**call.model_dump(), by_role={role: call})

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        counts = {
            k: getattr(self, k) + getattr(other, k) for k in Usage.model_fields if k != "by_role"
        }
        roles = dict(self.by_role)
        for role, usage in other.by_role.items():
            roles[role] = roles[role] + usage if role in roles else usage
        return Usage(**counts, by_role=roles)


def add_usage(left: Usage | dict | None, right: Usage | dict | None) -> Usage:
    """Reducer: usage from parallel workers and successive steps adds up (a dict, as a server's
    serializer or `update_state` may hand one back, is read as the `Usage` it holds)."""
    return Usage.model_validate(left or {}) + Usage.model_validate(right or {})


def latest_settings(
    earlier: Settings | dict | None, later: Settings | dict | None
) -> Settings | dict | None:
    """Reducer: the settings written last win, also when two are written in one step. A
    refused `Command(update=...)` from a LangGraph API caller stays among the step's pending
    writes; without a reducer the next update's made two values in one step, and every read of
    the thread (its state, a run, a resume) failed with "Can receive only one value per step"
    for good. Now the newer update replaces the refused one."""
    return earlier if later is None else later


# ---------------------------------------------------------------- keeping reports true

SourceState = Literal["unchanged", "changed", "moved", "gone", "unreachable", "not_rechecked"]
"""How a cited source stood when read again (`domain.recheck_rules`)."""
ClaimState = Literal[
    "unchanged", "quote_kept", "quote_gone", "page_gone", "unreachable", "not_rechecked"
]
"""How a cited claim stood when its source was read again (`domain.recheck_rules`)."""


class SourceRecheck(BaseModel):
    """One cited source read again: how it stands, and what its server answered."""

    number: int  # the number the report cites it by
    url: str
    title: str = ""
    kind: str = "page"  # page, document, tool or snippet: what the run kept of it
    state: SourceState
    status: int | None = None  # the HTTP status of the answer (None: no answer)
    final_url: str = ""  # where it answered from, after redirects
    conditional: bool = False  # the request carried the stored validators
    fetched: str = ""  # when the run read it (ISO 8601 UTC)
    sha256: str = ""  # the hash of the text the run read
    new_sha256: str = ""  # the hash of the text read now ("" when none was read)
    note: str = ""  # why it is unreachable, where it moved, ...


class ClaimRecheck(BaseModel):
    """One cited claim (a statement and one source it cites) after its source was read again."""

    statement: str
    number: int  # the source's number in the report
    quote: str = ""  # the words of the source the citation check kept
    state: ClaimState
    verdict: Verdict | None = None  # quote_gone: the citation check against the new text
    new_quote: str = ""  # quote_gone: the new text's words that decide it


class Recheck(BaseModel):
    """A finished report's citations checked against their sources as they are now."""

    thread_id: str
    checked: str  # when (ISO 8601 UTC)
    sources: list[SourceRecheck]
    claims: list[ClaimRecheck]
    model_calls: int = 0
    usage: Usage = Field(default_factory=Usage)  # what those model calls cost
    requests: int = 0  # requests sent to sources' servers
    not_modified: int = 0  # of which answered 304 Not Modified
    seconds: float = 0.0

    def count(self, state: ClaimState) -> int:
        """How many claims stand so."""
        return sum(claim.state == state for claim in self.claims)


class ClaimMatch(BaseModel):
    """The model's reading of one claim of a report's new version against the earlier one."""

    new: int = Field(description="The number of the new claim (N1 is 1).")
    old: int | None = Field(
        None, description="The number of the earlier claim it restates or updates (O2 is 2)."
    )
    relation: Literal["same", "figure_changed", "new"] = Field(
        description="same: the earlier claim says the same; figure_changed: it is about the "
        "same thing with a different number; new: no earlier claim is about it."
    )
    old_value: str = Field("", description="figure_changed: the earlier figure, as written.")
    new_value: str = Field("", description="figure_changed: the new figure, as written.")


class ClaimMatches(BaseModel):
    """The model's reading of a new version's claims against the earlier version's."""

    matches: list[ClaimMatch]


class CitedClaim(BaseModel):
    """A claim of a report with the sources it cites (number, address)."""

    claim: str
    sources: list[tuple[int, str]] = Field(default_factory=list)


class FigureChange(BaseModel):
    """A figure that changed between two versions, each value with its citations."""

    old: CitedClaim
    new: CitedClaim
    old_value: str
    new_value: str


class DroppedClaim(BaseModel):
    """A claim of the earlier version the new one no longer makes, and why."""

    claim: CitedClaim
    why: str


class ChangeList(BaseModel):
    """What changed, claim by claim, from one version of a watched report to the next."""

    watch_id: str
    version: int
    thread_id: str
    previous: str  # the earlier version's thread
    made: str  # when (ISO 8601 UTC)
    new_findings: list[CitedClaim] = Field(default_factory=list)
    changed_figures: list[FigureChange] = Field(default_factory=list)
    no_longer_supported: list[DroppedClaim] = Field(default_factory=list)
    sources_gone: list[SourceRecheck] = Field(default_factory=list)
    left_out: list[CitedClaim] = Field(
        default_factory=list, description="Earlier claims still supported, not made any more."
    )
    unresolved: list[CitedClaim] = Field(
        default_factory=list, description="New claims the model gave no valid reading of."
    )
    model_calls: int = 0
    usage: Usage = Field(default_factory=Usage)  # what those model calls cost

    @property
    def empty(self) -> bool:
        """True when nothing changed."""
        return not (
            self.new_findings
            or self.changed_figures
            or self.no_longer_supported
            or self.sources_gone
        )


# ---------------------------------------------------------------- research graph


def appended(items: list, batches: Sequence[list]) -> list:
    """Reducer of a list kept as a `DeltaChannel`: each step's new items after the earlier ones."""
    return [*items, *(item for batch in batches for item in batch)]


WorkerResults = Annotated[list[WorkerResult], DeltaChannel(appended)]
"""The research's evidence as a `DeltaChannel`: a checkpoint stores only the results a step
added (its writes), not the whole list again at every step; LangGraph rebuilds the list by
replaying them (`tools/checkpoints.py` and docs/architecture.md say why)."""


class ScoredReport(BaseModel):
    """A report with the review that scored it, the round that wrote it and its sections (so a
    later round's findings can still be written into it)."""

    report: str
    round: int
    quality: QualityAssessment
    sections: list[ReportSection] = Field(default_factory=list)


class ResearchInput(TypedDict):
    """What a caller gives: the question (settings may come here or as `context=`)."""

    question: str
    # in the input, they are checkpointed from step one; the last written win (`latest_settings`)
    settings: NotRequired[Annotated[Settings | dict, latest_settings]]
    # A follow-up question: an earlier run's results, written from first; only what they leave
    # missing is researched (`nodes.follow_up`). Ignored from callers of LangGraph's server.
    prior_results: NotRequired[list[WorkerResult]]
    # Whose kept evidence the carried results rest on: the earlier run's thread, and (a watched
    # question's next version) the re-check whose fresh pages refreshed them.
    follow_up_of: NotRequired[str]
    refreshed_by: NotRequired[str]


class ResearchOutput(TypedDict):
    """What a caller gets back."""

    report: str
    sources: list[Source]
    quality: QualityAssessment | None
    iteration: int
    usage: Usage
    cost_usd: float | None  # from the `prices` setting; None when a model has no price
    citations: list[CitationCheck]  # one entry per cited statement and source
    citation_precision: float | None  # supported / checked; None when nothing was checked
    stop_reason: StopReason
    report_problem: str  # "" or why the writer's reply could not be the report (then a note is)
    structured_output: dict[str, str]  # per model: the structured-output method it settled on
    sources_found: int  # distinct sources the searches returned (0: no evidence at all)
    report_round: int  # the round whose report this is (an earlier, better-scored one is kept)
    clarifications: list[Clarified]  # questions asked back before research, and the answers
    report_revised_with: list[int]  # later rounds whose findings revised that earlier report


def output_of(values: dict) -> dict:
    """A run's output (the `ResearchOutput` keys) from its state values, e.g. a snapshot's."""
    return {key: values.get(key) for key in ResearchOutput.__annotations__}


class ResearchState(ResearchInput, ResearchOutput, total=False):
    """Everything the orchestrator keeps between steps (and every checkpoint stores)."""

    run_id: str
    plan: TaskPlan
    worker_results: WorkerResults
    quality_history: Annotated[list[float | None], operator.add]  # None: no valid review
    gap_analysis: GapAnalysis
    best: ScoredReport  # the best-scored report so far (a later one at least as good replaces it)
    usage: Annotated[Usage, add_usage]
    sections: list[ReportSection]  # the report's sections as last written (summary apart)
    claims_needing_evidence: list[str]  # statements the last review found without support
    weighed: WeighedEvidence  # the last weighing pass: disagreements, evidence set aside
    review_omitted: list[Quote]  # evidence the last review said the report should have used
    review_other_entity: list[str]  # statements the last review found about another entity


# ---------------------------------------------------------------- worker subgraph


class WorkerInput(TypedDict):
    """What the orchestrator sends one worker (a `Send` payload)."""

    question: str
    subtask: SubTask
    budget: Budget
    round: int
    settings: Settings
    run_id: str
    spent: Usage  # the run's usage when the worker was sent, for the run budgets
    # The subtask ids of the workers this one shares the run's budgets with (its fan-out, or
    # the relay's workers still to come), itself included.
    siblings: NotRequired[list[int]]
    earlier_findings: NotRequired[list[str]]  # depth-first relay: what the workers before found


class WorkerOutput(TypedDict):
    """What a worker gives back to the orchestrator, merged by its reducers."""

    worker_results: WorkerResults  # a `DeltaChannel`: stored as the step that adds a result
    usage: Annotated[Usage, add_usage]


class ToolCall(BaseModel):
    """One tool call a worker's model made: the tool's name and its arguments."""

    id: str
    name: str
    args: dict = Field(default_factory=dict)


class ToolRound(BaseModel):
    """One decide-act exchange of a worker that calls tools: the calls its model made and the
    (compact, untrusted) text each result came back as, in the same order."""

    calls: list[ToolCall]
    results: list[str] = Field(default_factory=list)
    text: str = ""  # what the model wrote beside its calls (the prompt protocol's reply text)


class ToolOutcome(BaseModel):
    """What one executed tool call brought (saved as a task, so a resumed run reads it back):
    the compact text its model is shown, and the evidence it adds to the worker's state."""

    text: str
    queries: list[str] = Field(default_factory=list)  # searches sent
    hits: list[SearchHit] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    page: ReadPage | None = None
    usage: Usage = Field(default_factory=Usage)
    skipped: bool = False  # not run: over budget, not a known target, or a repeat


class WorkerState(WorkerInput, WorkerOutput, total=False):
    """A worker's loop state: the budget counters and the evidence gathered so far."""

    tool_protocol: ToolProtocol  # set by the first decide: how this worker acts
    # the worker's conversation, protocol-neutral, and its pages: a step writes only what it
    # adds (`DeltaChannel`), so a checkpoint does not store the whole list again at every round
    tool_rounds: Annotated[list[ToolRound], DeltaChannel(appended)]
    read_pages: Annotated[list[ReadPage], DeltaChannel(appended)]
    pending_round: ToolRound | None  # the calls `decide` chose, for `act` to run
    mcp_calls_used: int
    fallback_reason: str

    pending_queries: list[str]
    sent_queries: list[str]
    cycles_used: int
    hits: Annotated[list[SearchHit], DeltaChannel(appended)]  # a step writes what it adds
    gaps: list[str]
    search_errors: list[str]
    termination_reason: WorkerStopReason
