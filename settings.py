"""Run settings: every number that bounds a run's cost, validated, with the reference defaults.

`Settings` is the research graph's `context_schema`, so Studio shows it as the configuration
panel and `graph.ainvoke(..., context={...})` validates it. The first step of a run copies it
into state, because LangGraph does not persist `context=`: a resumed run finds its settings.
"""

from __future__ import annotations

import functools
import os
import warnings
from decimal import Decimal
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

LanguageCode = Literal[
    "en", "zh-Hans", "zh-Hant", "ja", "ko", "de", "fr", "es", "it", "pt", "nl", "ru", "und"
]
"""The languages a report can be written in; `und`: another one, named by the question itself."""
Complexity = Literal["simple", "medium", "complex"]
Role = Literal["planner", "researcher", "writer", "reviewer"]
ROLES: tuple[Role, ...] = ("planner", "researcher", "writer", "reviewer")

DEFAULT_MODEL = "gpt-4.1-mini"

WebProvider = Literal["tavily", "bocha", "searxng", "duckduckgo"]
SearchBackendName = Literal[WebProvider, "local", "hybrid"]
WEB_PROVIDERS: tuple[str, ...] = get_args(WebProvider)
SEARCH_BACKENDS: tuple[str, ...] = get_args(SearchBackendName)
PROVIDER_VARIABLES = {
    "tavily": "TAVILY_API_KEY",
    "bocha": "BOCHA_API_KEY",
    "searxng": "SEARXNG_URL",
}
"""The variable that makes a web provider usable, in the order a default is chosen."""
ReportLength = Literal["brief", "standard", "long"]
TimeRange = Literal["day", "week", "month", "year"]
MIN_REPORT_WORDS, MAX_REPORT_WORDS = 300, 20_000
RENAMED_SETTINGS: dict[str, str] = {"request_timeout": "search_timeout"}
"""Old setting names that still work (with a warning naming the new one), and their new names."""


def renamed(old: str, where: str | None = None) -> str:
    """The warning for a setting given under its old name (`where`: how the user wrote it)."""
    new = RENAMED_SETTINGS[old]
    return f"{where or old}: write {new}, the setting's new name ({old} still works)"


def _default_model() -> str:
    """The model for every role unless the caller names one: `DEEP_RESEARCH_MODEL` or ours."""
    return os.environ.get("DEEP_RESEARCH_MODEL") or DEFAULT_MODEL


WorkerTools = Literal["auto", "native", "prompt", "off"]


def _default_worker_tools() -> str:
    """How workers act unless the caller says: `DEEP_RESEARCH_WORKER_TOOLS`, else `auto`."""
    return os.environ.get("DEEP_RESEARCH_WORKER_TOOLS", "").strip() or "auto"


def domain_name(text: str) -> str:
    """A domain as given by a person (`https://www.Example.org/x`, `.example.org`) as a bare
    lower-case host name (`example.org`); refuses what cannot be one."""
    host = text.strip().lower().split("://")[-1].split("/")[0].split(":")[0].strip(".")
    host = host.removeprefix("www.")
    if not host or not all(part and part.replace("-", "").isalnum() for part in host.split(".")):
        raise ValueError(f"{text.strip()!r} is not a domain name (write e.g. example.org)")
    return host


def detected_web_provider() -> str:
    """The first provider whose variable is set, else key-free duckduckgo: no key still runs."""
    for provider, variable in PROVIDER_VARIABLES.items():
        if os.environ.get(variable, "").strip():
            return provider
    return "duckduckgo"


def usable_web_providers() -> list[str]:
    """The web providers this process can search with: those whose variable is set, and
    key-free duckduckgo."""
    named = [
        p for p, variable in PROVIDER_VARIABLES.items() if os.environ.get(variable, "").strip()
    ]
    return [*named, "duckduckgo"]


class ModelPrice(BaseModel):
    """What a model costs, in US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input_per_million: float = Field(ge=0)
    output_per_million: float = Field(ge=0)


OPENAI_API_URL = "https://api.openai.com/v1"  # where plain model names go without a base URL


def openai_base_url() -> str | None:
    """The chat server's base URL, from the variables the OpenAI SDK itself reads."""
    return os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or None


def provider_of(name: str) -> str | None:
    """The LangChain provider a `provider:model` name names; None for a plain name (which may
    hold a colon itself, like Ollama's `qwen2.5:7b`, and still means the OpenAI endpoint)."""
    prefix, colon, rest = name.partition(":")
    if not (colon and rest):
        return None
    from langchain.chat_models.base import _BUILTIN_PROVIDERS  # only names with a colon pay it

    return prefix if prefix in _BUILTIN_PROVIDERS else None


def _base_rate(price: object) -> Decimal | None:
    """Dollars per million tokens below any volume tier (our prompts stay under
    `max_context_tokens`); None when the table gives no such price."""
    rate = getattr(price, "base", price)  # genai-prices' TieredPrices, or a plain Decimal
    return rate if isinstance(rate, Decimal) else None


def load_price_table() -> None:
    """Load genai-prices' bundled table now (30 ms, about 17,500 objects), before the graph's
    `gc.freeze` (`tools.process_wide.built_for_good`): loaded at the first run's price look-up,
    it was walked again by every full garbage collection of a process with many runs."""
    from genai_prices.data_snapshot import get_snapshot

    get_snapshot()


@functools.cache
def listed_price(model: str, base_url: str | None) -> ModelPrice | None:
    """What pydantic's genai-prices lists for `model` where it is served: a `provider:model`
    name at that provider, a plain (or `openai:`) name at the OpenAI-compatible server
    `base_url` (OpenAI itself when None). None when its table lists no price there: a model on
    a local or unknown server is never priced as some provider's namesake.

    The table ships inside the package; its updater, the one part that fetches prices over
    the network, is never started (`genai_prices.UpdatePrices`), so a run's prices are the
    installed version's."""
    from genai_prices import Usage, calc_price

    provider = provider_of(model)
    nothing = Usage(input_tokens=0, output_tokens=0)
    try:
        if provider in (None, "openai"):
            name, where = model.removeprefix("openai:"), base_url or OPENAI_API_URL
            found = calc_price(nothing, name, provider_api_url=where)
        else:
            found = calc_price(nothing, model.partition(":")[2], provider_id=provider)
    except LookupError:  # no provider serves at that address, or it lists no such model
        return None
    rates = [_base_rate(found.model_price.input_mtok), _base_rate(found.model_price.output_mtok)]
    if None in rates:
        return None
    return ModelPrice(input_per_million=float(rates[0]), output_per_million=float(rates[1]))


class Settings(BaseModel):
    """How much work a run may do, and with which models; the graph's context schema."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    max_workers: int = Field(6, ge=1, le=64, description="Workers that research at once.")
    max_subtasks: int = Field(8, ge=1, le=50, description="Cap on the subtasks of any plan.")
    min_iterations: int = Field(2, ge=1, le=20, description="Rounds before quality may stop.")
    max_iterations: int = Field(5, ge=1, le=20, description="Rounds at most (1 = no gap round).")
    quality_threshold: float = Field(80, ge=0, le=100, description="Score (0-100) that is enough.")
    diminishing_returns: bool = Field(True, description="Stop when rounds stop paying.")
    min_improvement: float = Field(5, ge=0, le=100, description="Gain over the best that counts.")
    plateau_rounds: int = Field(2, ge=1, le=10, description="Rounds without that gain end the run.")
    max_queries: int | None = Field(
        None, ge=1, le=50, description="Queries per worker; overrides the complexity budget."
    )
    max_cycles: int | None = Field(
        None, ge=1, le=10, description="OODA cycles per worker; overrides the complexity budget."
    )
    max_results: int = Field(
        7,
        ge=1,
        le=20,
        description=(
            "Results per search: a hit's snippet is evidence that costs no page read; Tavily "
            "bills a search by its depth, not its results, and more results cost prompt tokens."
        ),
    )
    worker_tools: WorkerTools = Field(
        default_factory=_default_worker_tools,
        description="How a worker's model acts: auto (native tool calls, else tools written in "
        "the prompt, as the server allows), native, prompt, or off (the fixed search loop).",
    )
    max_pages: int | None = Field(
        None,
        ge=0,
        le=50,
        description="Cap on the pages one worker reads whole; unset: a fair share of the "
        "run's max_page_fetches, drawn as it needs them.",
    )
    worker_max_rounds: int = Field(
        6,
        ge=1,
        le=20,
        description="Decide-act rounds at most for a worker whose model chooses its tools "
        "(its pages and searches are drawn from the run's budgets).",
    )
    max_supplementary_tasks: int = Field(
        3, ge=1, le=20, description="Subtasks a gap round may add."
    )
    search_backend: SearchBackendName = Field(
        default_factory=detected_web_provider,
        description="A web provider, a folder of documents (local), or both (hybrid).",
    )
    web_backend: WebProvider = Field(
        default_factory=detected_web_provider, description="The web provider hybrid search uses."
    )
    fetch_pages: int = Field(
        0, ge=0, le=10, description="Top hits per search whose whole page is read when thin."
    )
    max_page_fetches: int = Field(
        60,
        ge=1,
        le=1000,
        description="Run budget: whole pages fetched at most (workers draw their pages from it).",
    )
    page_max_bytes: int = Field(
        2_000_000, ge=10_000, le=50_000_000, description="Bytes read of one page at most."
    )
    page_timeout: float = Field(15, gt=0, le=300, description="Seconds per page fetch.")
    evidence_max_bytes: int = Field(
        4_000_000,
        ge=0,
        le=1_000_000_000,
        description="Bytes of cited pages' text a finished run keeps in the store at most "
        "(0: none, only their hashes); a page cut to fit says so in a line.",
    )
    fetch_private_addresses: bool = Field(
        False, description="Let page fetches reach loopback, private and link-local addresses."
    )
    corpus_dir: str | None = Field(
        None, description="The folder that local and hybrid search read (recursively)."
    )
    mcp_config: str | None = Field(
        None,
        description="A JSON file of MCP servers (the mcpServers shape, with allowedTools) "
        "whose allowed tools are asked every query beside the search backend.",
    )
    model: str = Field(
        default_factory=_default_model,
        min_length=1,
        description="Model for every role without its own: a name on the OpenAI-compatible "
        "server, or provider:model (anthropic:..., ollama:...).",
    )
    planner_model: str | None = Field(None, description="Model for planning; default `model`.")
    researcher_model: str | None = Field(None, description="Model for workers; default `model`.")
    writer_model: str | None = Field(None, description="Model for the report; default `model`.")
    reviewer_model: str | None = Field(None, description="Model for review; default `model`.")
    language: LanguageCode | None = Field(
        None,
        description="Language of the report, its headings and marks (en, zh-Hans, zh-Hant, ja, "
        "ko, de, fr, es, it, pt, nl, ru); unset: detected from the question.",
    )
    verify_citations: bool = Field(
        True, description="Check every cited statement against its source before finishing."
    )
    report_length: ReportLength | int = Field(
        "standard",
        description="How long the report is: brief, standard or long, or a target in words "
        "(300-20000); the evidence can make it shorter, never padded.",
    )
    include_domains: list[str] = Field(
        default_factory=list,
        description="Only sources on these domains (and their subdomains) are used.",
    )
    exclude_domains: list[str] = Field(
        default_factory=list, description="Sources on these domains (and subdomains) are dropped."
    )
    time_range: TimeRange | None = Field(
        None, description="Only sources from the last day, week, month or year (where known)."
    )
    clarify: bool = Field(
        True,
        description="Before planning, ask up to three short questions back when the question is "
        "too vague to research well (where someone can answer: not in batch, eval or a run "
        "without a checkpointer).",
    )
    approve_plan: bool = Field(
        False, description="Pause after planning until a person approves or edits the plan."
    )
    structured_output: Literal["auto", "json_schema", "json_object", "tool_calling", "prompt"] = (
        Field("auto", description="How replies are forced into the JSON contracts.")
    )
    structured_retries: int = Field(
        2, ge=0, le=5, description="Re-asks after a reply that breaks its contract."
    )
    search_timeout: float = Field(
        120,
        gt=0,
        le=3600,
        description="Seconds one search may take (model calls stream: request_idle_timeout).",
    )
    model_call_timeout: float = Field(
        1800,
        gt=0,
        le=7200,
        description="Cap on one model call's total seconds (a slow local writer takes ~6 min).",
    )
    request_idle_timeout: float = Field(
        180,
        gt=0,
        le=3600,
        description="Seconds a streaming model call may go without a token before it fails.",
    )
    planner_max_tokens: int = Field(
        2_000, ge=16, le=200_000, description="Reply cap (max_tokens) of a planner call."
    )
    researcher_max_tokens: int = Field(
        2_000, ge=16, le=200_000, description="Reply cap (max_tokens) of a researcher call."
    )
    writer_max_tokens: int = Field(
        6_000, ge=16, le=200_000, description="Reply cap (max_tokens) of a writer call."
    )
    reviewer_max_tokens: int = Field(
        1_500, ge=16, le=200_000, description="Reply cap (max_tokens) of a reviewer call."
    )
    system_role: Literal["auto", "system", "user"] = Field(
        "auto",
        description="Where system instructions go: a system message, or the first user message "
        "(auto: user for model families whose templates lack a system role).",
    )
    local_model: bool = Field(
        False,
        description="Profile for one slow local server: one call at a time, smaller prompts, "
        "longer idle timeout (fills only settings not given).",
    )
    model_retries: int = Field(3, ge=0, le=10, description="Retries of a failed model call.")
    search_retries: int = Field(3, ge=0, le=10, description="Retries of a failed search.")
    max_concurrent_model_calls: int = Field(
        16, ge=1, le=256, description="Model calls in flight at once, all workers together."
    )
    max_total_tokens: int | None = Field(
        None, ge=1, description="Run budget: input plus output tokens; no new round past it."
    )
    max_search_calls: int | None = Field(
        None, ge=1, description="Run budget: searches sent; no new round past it."
    )
    max_cost_usd: float | None = Field(
        None,
        gt=0,
        description="Run budget in dollars (needs a price per model); no new round past it.",
    )
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict,
        description="Price per model name, in dollars per million tokens; a model without one "
        "gets genai-prices' price where it lists the model on the server that serves it, else "
        "its cost is unknown.",
    )
    max_context_tokens: int = Field(
        100_000,
        ge=1_000,
        le=2_000_000,
        description="Largest prompt the run may send, in tokens (lowered to the server's "
        "context window when it tells).",
    )
    max_concurrent_searches: int = Field(
        16, ge=1, le=256, description="Searches in flight at once, all workers together."
    )

    @model_validator(mode="before")
    @classmethod
    def _local_profile(cls, values: object) -> object:
        """With `local_model`, the profile's values fill what the caller did not set; a
        `corpus_dir` without a search backend means searching that folder."""
        if isinstance(values, dict) and values.get("local_model"):
            values = {**LOCAL_PROFILE, **values}
        if isinstance(values, dict) and values.get("corpus_dir") and "search_backend" not in values:
            values = {**values, "search_backend": "local"}  # a folder given is a folder searched
        return values

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, values: object) -> object:
        """A setting given under its old name works, with a warning that names the new one."""
        if not isinstance(values, dict) or not values.keys() & RENAMED_SETTINGS.keys():
            return values
        values = dict(values)
        for old, new in RENAMED_SETTINGS.items():
            if old in values:
                if new in values:
                    raise ValueError(f"{old} is the old name of {new}: give {new} only")
                warnings.warn(renamed(old), FutureWarning, stacklevel=2)
                values[new] = values.pop(old)
        return values

    @model_validator(mode="after")
    def _iterations_in_order(self) -> Settings:
        """Adapt the round limit the caller did not give to the one they did; refuse a clash."""
        given = self.model_fields_set
        if self.min_iterations > self.max_iterations:
            if "min_iterations" not in given:  # `max_iterations=1` alone means one round
                self.__dict__["min_iterations"] = self.max_iterations
            elif "max_iterations" not in given:  # `min_iterations=7` alone raises the cap
                self.__dict__["max_iterations"] = self.min_iterations
        if self.min_iterations > self.max_iterations:
            raise ValueError(
                f"min_iterations ({self.min_iterations}) is above "
                f"max_iterations ({self.max_iterations})"
            )
        return self

    @model_validator(mode="after")
    def _every_model_priced(self) -> Settings:
        """A model the caller gave no price gets the one genai-prices lists (`listed_price`);
        a dollar budget needs a price for every model the run uses, else its cost is unknown."""
        base_url = openai_base_url()
        missing = sorted({self.model_for(role) for role in ROLES} - set(self.prices))
        listed = {name: price for name in missing if (price := listed_price(name, base_url))}
        if listed:
            self.__dict__["prices"] = {**self.prices, **listed}
        unpriced = [name for name in missing if name not in listed]
        if self.max_cost_usd is not None and unpriced:
            raise ValueError(
                f"max_cost_usd needs prices for every model used: {unpriced} (genai-prices "
                "lists none for them where they are served): give them in prices"
            )
        return self

    def unpriced_models(self) -> list[str]:
        """The models the run uses that have no price: its cost is unknown."""
        return sorted({self.model_for(role) for role in ROLES} - set(self.prices))

    @field_validator("report_length")
    @classmethod
    def _words_in_range(cls, value: ReportLength | int) -> ReportLength | int:
        """A target in words is one a report can meet: 300 to 20,000."""
        if isinstance(value, int) and not MIN_REPORT_WORDS <= value <= MAX_REPORT_WORDS:
            raise ValueError(
                f"report_length {value} words is out of range: give brief, standard, long or "
                f"{MIN_REPORT_WORDS}-{MAX_REPORT_WORDS} words"
            )
        return value

    @field_validator("include_domains", "exclude_domains", mode="before")
    @classmethod
    def _domain_names(cls, value: object) -> object:
        """Domains as bare lower-case host names; a comma-separated string is a list."""
        if isinstance(value, str):
            value = value.split(",")
        if not isinstance(value, list):
            return value
        return [domain_name(str(item)) for item in value if str(item).strip()]

    @model_validator(mode="after")
    def _corpus_for_local_search(self) -> Settings:
        """Local and hybrid search read a folder: it must be named."""
        if self.search_backend in ("local", "hybrid") and not self.corpus_dir:
            raise ValueError(f"search_backend {self.search_backend!r} needs corpus_dir")
        if self.corpus_dir and self.search_backend not in ("local", "hybrid"):
            raise ValueError(
                f"corpus_dir is set but search_backend {self.search_backend!r} never reads it: "
                "use search_backend local or hybrid, or drop corpus_dir"
            )
        return self

    def model_for(self, role: Role) -> str:
        """The model name a role uses: its own if set, else the shared `model`."""
        return getattr(self, f"{role}_model") or self.model

    def max_tokens_for(self, role: Role) -> int:
        """The reply cap (`max_tokens`) every call of a role sends."""
        return getattr(self, f"{role}_max_tokens")


# One slow local server (llama.cpp, Ollama, LM Studio on a laptop): one call at a time, prompts
# that fit a small context, replies capped to what such a model writes in minutes, patience.
LOCAL_PROFILE: dict[str, object] = {
    "max_concurrent_model_calls": 1,
    "max_workers": 2,
    "max_context_tokens": 8_192,
    "request_idle_timeout": 600,
    "planner_max_tokens": 400,
    "researcher_max_tokens": 400,
    "writer_max_tokens": 1_500,
    "reviewer_max_tokens": 400,
    "structured_retries": 1,
    "max_results": 4,
    "worker_max_rounds": 4,  # each decide call is minutes on a CPU
    "max_page_fetches": 30,  # and each page read is a quoting call
    "report_length": "brief",  # a few sections: each is a call of minutes on a CPU
}


LOWERS_A_GUARD = ("fetch_private_addresses", "mcp_config")
"""Settings that lower a security guard (page fetches to private addresses; starting the commands
an MCP config names): taken only from the person running the command, never from a file found
in the current folder."""
SERVER_ONLY = (*LOWERS_A_GUARD, "corpus_dir")
"""Settings a remote caller (LangGraph's API, MCP, the web app) never sets: what the server
reads, fetches and starts is the operator's (`domain.caller_settings.for_remote_caller`)."""
GUARD_NOTE = (
    "fetch_private_addresses is on: page fetches may reach loopback, private and link-local "
    "addresses"
)


def settings_from(context: Settings | dict | None) -> Settings:
    """Settings from whatever the caller passed as `context=` (nothing means the defaults)."""
    if isinstance(context, Settings):
        return context
    return Settings.model_validate(context or {})
