"""A worker whose model acts: `decide` asks it for tool calls, `act` runs them and appends.

The reference article's loop inside the worker's OODA cycle: the model sees its subtask, the
evidence so far and a toolbox (web search, read a page, finish) and answers with tool calls;
`act` runs them within the worker's budget (queries, page reads, rounds) and the run's ledger,
and each result joins the worker's conversation, which is sent again at the next `decide`.
Each call runs as a saved task (`durable_tool`): a run killed mid-loop never sends an answered
call again. A page is read whole through the run's guarded reader and kept as verbatim quotes
with the claims they support, and the links it offers (which a later round may follow); state
keeps those, never the page.

A model that makes no usable tool call in its first round hands the worker to the fixed loop
(`WorkerFellBack` says so); later, no call means it is done.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from deep_research.domain.budgets import queries_left, tool_rounds_left
from deep_research.domain.context import clip, estimate_tokens
from deep_research.domain.distinct import distinct
from deep_research.domain.fences import data_section
from deep_research.domain.language import run_language
from deep_research.domain.link_rank import ranked_links
from deep_research.domain.source_filter import SourceFilter
from deep_research.domain.sources import normalize_url
from deep_research.domain.verbatim import FlatPage, best_sentences
from deep_research.nodes import prompts
from deep_research.nodes.worker_search import admitted_hits, budget_use, search_once
from deep_research.settings import Settings
from deep_research.state import (
    PageLink,
    PageQuote,
    PageQuotes,
    Quote,
    ReadPage,
    SearchHit,
    ToolCall,
    ToolOutcome,
    ToolRound,
    Usage,
    WorkerState,
)
from deep_research.tools.durable_calls import durable_tool
from deep_research.tools.events import WorkerActed, WorkerFellBack, WorkerReading, emit
from deep_research.tools.run_resources import LiveRuns, RunResources, worker_key
from deep_research.tools.search.pages import FetchedPage, best_passages, counted_fetches
from deep_research.tools.search.tool_sources import ToolFailed
from deep_research.tools.secrets import redact
from deep_research.tools.structured import (
    MODEL_CALL_ERRORS,
    MethodRefused,
    StructuredOutputError,
    ask,
)
from deep_research.tools.tool_calling import Protocol, choose_tools
from deep_research.tools.toolbox import (
    FINISH,
    READ_PAGE,
    SEARCH_DOCUMENTS,
    WEB_SEARCH,
    Toolbox,
    toolbox,
)

MODEL_ERRORS = (*MODEL_CALL_ERRORS, StructuredOutputError)
DECIDE_ERRORS = (*MODEL_ERRORS, MethodRefused)  # MethodRefused: `native` named, none to be had
ROUNDS_SHOWN = 3  # earlier rounds live on in the evidence, not in the conversation
RESULT_CHARS = 3000  # one tool result as the model is shown it, at most
HIT_LINE_CHARS = 200  # a hit's snippet in a search result, at most
MAX_QUOTES = 16  # quotes kept per page read, at most (a lab report states ten results)
QUOTE_TOKENS = 100  # of the researcher's reply cap, what one quote and its claim take
PAGE_SHARE = 0.75  # of the prompt budget, what a page's text may take when quoting it


def uses_tools(state: WorkerState, worker_tools: str) -> bool:
    """True while this worker's model chooses its actions (not off, not fallen back)."""
    return worker_tools != "off" and state.get("tool_protocol") != "fixed"


def _readable(url: str) -> bool:
    """A URL the page reader can be asked for (search providers' http(s) results)."""
    return url.startswith(("http://", "https://"))


def read_targets(state: WorkerState) -> dict[str, str]:
    """URLs a worker may read (normalized -> as listed): its hits' and the links of the pages
    it read (the second hop), minus those already read."""
    pages = state.get("read_pages", [])
    done = {normalize_url(page.url) for page in pages}
    listed = [hit.url for hit in state.get("hits", [])] + [
        link.url for page in pages for link in page.links
    ]
    targets: dict[str, str] = {}
    for url in listed:
        key = normalize_url(url)
        if _readable(url) and key not in done:
            targets.setdefault(key, url)
    return targets


def pages_left(state: WorkerState, run: RunResources) -> int:
    """Pages this worker may read now: its fair share of the run's page budget left (re-drawn
    at every step, so what finished siblings leave comes to those still working), within its
    own cap when `max_pages` sets one."""
    share = run.share(state, run.ledger.pages_left(run.settings))
    cap, read = state["budget"].max_pages, len(state.get("read_pages", []))
    return share if cap is None else min(share, max(0, cap - read))


def searches_left(state: WorkerState, run: RunResources) -> int:
    """Searches this worker may send now: its own `max_queries` left and, when the run has a
    search budget, its fair share of what is left of it."""
    own = queries_left(state["budget"], len(state.get("sent_queries", [])))
    left = run.ledger.searches_left(run.settings)
    return own if left is None else min(own, run.share(state, left))


def round_affordable(state: WorkerState, run: RunResources) -> bool:
    """True unless the run has a token budget and this worker's rounds so far cost, on average,
    more than its fair share of the tokens left."""
    left, rounds = run.ledger.tokens_left(run.settings), len(state.get("tool_rounds", []))
    if left is None or not rounds:
        return True
    spent = (state.get("usage") or Usage()).total_tokens
    return spent / rounds <= run.share(state, left)


def mcp_left(state: WorkerState) -> int:
    """MCP tool calls this worker may still make."""
    return max(0, state["budget"].max_mcp_calls - state.get("mcp_calls_used", 0))


async def mcp_specs(run: RunResources) -> list[tuple[str, str, str, dict]]:
    """The run's allowed MCP tools (server, tool, description, schema); none without."""
    tools = run.mcp_tools
    return await tools.tool_specs() if tools is not None else []


async def offered(state: WorkerState, run: RunResources) -> Toolbox:
    """The tools worth offering now: each only while its budget (and something to use it
    on) is left."""
    searches = searches_left(state, run) > 0
    return toolbox(
        search=searches,
        pages=pages_left(state, run) > 0 and bool(read_targets(state)),
        documents=searches and run.documents_cache is not None,
        mcp=await mcp_specs(run) if mcp_left(state) else [],
    )


def _budget_text(state: WorkerState, run: RunResources) -> str:
    """What the worker may still spend, in words its model reads."""
    rounds = tool_rounds_left(state["budget"], len(state.get("tool_rounds", [])))
    return (
        f"{searches_left(state, run)} searches, {pages_left(state, run)} page reads, {rounds} "
        "rounds (this one included; the page reads are your share of the run's, and more may "
        "come as other researchers finish)"
    )


def _round_messages(round_: ToolRound, protocol: Protocol) -> list[BaseMessage]:
    """One past exchange as the protocol writes it: native tool calls and tool messages, or
    the reply's text and the results as text."""
    if protocol == "native":
        calls = [{"id": c.id, "name": c.name, "args": c.args} for c in round_.calls]
        return [
            AIMessage(round_.text, tool_calls=calls),
            *(
                ToolMessage(data_section(result), tool_call_id=call.id)
                for call, result in zip(round_.calls, round_.results, strict=True)
            ),
        ]
    written = "\n".join(
        "<tool_call>"
        + json.dumps({"name": c.name, "arguments": c.args}, ensure_ascii=False)
        + "</tool_call>"
        for c in round_.calls
    )
    named = [(c.name, r) for c, r in zip(round_.calls, round_.results, strict=True)]
    return [AIMessage(written), HumanMessage(prompts.tool_results(named))]


def _fitted(round_: ToolRound, room: int) -> ToolRound:
    """A round whose results are clipped so that together they fit in `room` tokens."""
    each = max(50, room // max(1, len(round_.results)))
    return round_.model_copy(update={"results": [clip(r, each) for r in round_.results]})


def latest_rounds(rounds: list[ToolRound], protocol: Protocol, room: int) -> list[BaseMessage]:
    """The latest rounds (at most `ROUNDS_SHOWN`) that fit in `room` tokens, oldest first; the
    newest is always sent, its results clipped to fit if they must be."""
    kept: list[list[BaseMessage]] = []
    for round_ in reversed(rounds[-ROUNDS_SHOWN:]):
        messages = _round_messages(round_ if kept else _fitted(round_, room), protocol)
        cost = sum(
            estimate_tokens(m.text) + 10 * len(getattr(m, "tool_calls", [])) for m in messages
        )
        if kept and cost > room:
            break
        kept.append(messages)
        room -= cost
    return [message for messages in reversed(kept) for message in messages]


def conversation(
    state: WorkerState,
    box: Toolbox,
    protocol: Protocol,
    run: RunResources,
    documents: dict[str, int] | None = None,
) -> list[BaseMessage]:
    """The worker's conversation: the subtask, evidence, budget and the languages of the
    `documents` searched, then its latest rounds (the first part takes half the context budget
    at most, the rounds the rest)."""
    settings = run.settings
    messages = prompts.worker_tools(
        state["question"],
        state["subtask"],
        prompts.tool_evidence(state.get("hits", []), state.get("read_pages", [])),
        _budget_text(state, run),
        settings.max_context_tokens // 2,  # the rounds take the other half at most
        tool_list=box.prompt_text() if protocol == "prompt" else "",
        earlier=state.get("earlier_findings", []),
        suggested=[] if state.get("sent_queries") else state["subtask"].search_queries,
        documents=documents,
    )
    room = settings.max_context_tokens - sum(estimate_tokens(m.text) for m in messages)
    reply = settings.max_tokens_for("researcher")
    rounds = state.get("tool_rounds", [])
    return messages + latest_rounds(rounds, protocol, max(200, room - reply) // 2)


def _usage_of(error: BaseException) -> Usage:
    """What a failed model step had already cost (`ask` attaches it to the error)."""
    return getattr(error, "usage", None) or Usage()


def _fell_back(state: WorkerState, protocol: str, why: str, usage: Usage) -> dict:
    """The worker hands itself to the fixed loop, and says so on the progress stream."""
    emit(WorkerFellBack(**budget_use(state), protocol=protocol, why=why))
    return {"tool_protocol": "fixed", "fallback_reason": why, "usage": usage}


async def decide(state: WorkerState, *, runs: LiveRuns) -> dict:
    """Decide: the model chooses tool calls (or finishes); a first round without a usable call
    falls back to the fixed loop (`tool_protocol` "fixed" in the update)."""
    rounds = state.get("tool_rounds", [])
    run = runs.for_worker(state)
    if not tool_rounds_left(state["budget"], len(rounds)) or not round_affordable(state, run):
        return {"termination_reason": "budget_spent"}
    box = await offered(state, run)
    if box.names == [FINISH]:  # nothing left to spend on
        return {"termination_reason": "budget_spent"}
    documents = await run.document_languages()
    async with run.worker_slots:
        if run.model_budget_spent():
            return {"termination_reason": "run_budget_spent"}
        try:
            choice = await choose_tools(
                lambda protocol: conversation(state, box, protocol, run, documents),
                box,
                role="researcher",
                client=run.model_client(),
            )
        except DECIDE_ERRORS as error:
            why = redact(f"{type(error).__name__}: {error}")[:200]
            if not rounds:  # the fixed loop asks for less; let it try
                return _fell_back(state, run.settings.worker_tools, why, _usage_of(error))
            return {"termination_reason": "model_error", "usage": _usage_of(error)}
    if not choice.calls:
        if not rounds:
            return _fell_back(state, choice.protocol, "no usable tool call", choice.usage)
        return {"termination_reason": "finished", "usage": choice.usage}
    update: dict = {"tool_protocol": choice.protocol, "usage": choice.usage}
    if all(call.name == FINISH for call in choice.calls):
        return {**update, "termination_reason": "finished"}
    return {**update, "pending_round": ToolRound(calls=choice.calls, text=choice.text[:2000])}


# ---------------------------------------------------------------- act


def _call_key(state: WorkerState, number: int, call: ToolCall) -> str:
    """A call's fingerprint: which worker, which round, which call, with what arguments."""
    payload = [list(worker_key(state)), number, call.name, call.args]
    text = json.dumps(payload, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _search_text(outcomes: list[tuple[str, list[SearchHit], str]]) -> str:
    """Search results as the model reads them: per query, each hit's URL, title and snippet."""
    parts = []
    for query, hits, error in outcomes:
        lines = [f"Query {query!r}: {len(hits)} results" + (f" ({error})" if error else "")]
        for hit in hits:
            snippet = " ".join(hit.content.split())[:HIT_LINE_CHARS]
            lines.append(f"- {prompts.one_line(hit.title)} — {hit.url}\n  {snippet}")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)[:RESULT_CHARS]


async def _web_search(run: RunResources, queries: list[str], documents: bool = False) -> str:
    """Run a web_search call's queries at once through the run's cache and budget (with
    `documents`, a search_documents call's query through the folder's own cache)."""
    cache = run.documents_cache if documents else run.web_cache
    searched = await asyncio.gather(*(search_once(run, q, cache) for q in queries))
    sent = [(q, o) for q, o in zip(queries, searched, strict=True) if o is not None]
    outcome = ToolOutcome(
        text=_search_text([(q, hits, error) for q, (hits, _, error) in sent])
        or "no search was sent: the run's search budget is spent",
        queries=[q for q, _ in sent],
        hits=[hit for _, (hits, _, _) in sent for hit in hits],
        errors=[error for _, (_, _, error) in sent if error],
        usage=sum((cost for _, (_, cost, _) in sent), Usage()),
    )
    return outcome.model_dump_json(exclude_defaults=True)


def quotes_per_page(settings: Settings) -> int:
    """Quotes a page read may give: as many as the researcher's reply cap holds, 8 to 16."""
    return min(MAX_QUOTES, max(8, settings.researcher_max_tokens // QUOTE_TOKENS))


def _kept_quotes(answer: PageQuotes, text: str, most: int) -> list[PageQuote]:
    """The model's quotes that the page holds, as the page words them (repeats dropped), at
    most `most`."""
    kept: dict[str, PageQuote] = {}
    page = FlatPage(text)  # flattened once, not once per quote
    for quote in answer.quotes:
        words = page.verbatim(quote.text)
        if words and words not in kept:
            kept[words] = PageQuote(text=words, claim=" ".join(quote.claim.split())[:300])
    return list(kept.values())[:most]


def _task_words(state: WorkerState) -> str:
    """The words of a worker's task: its subtask and the planner's queries."""
    subtask = state["subtask"]
    return f"{subtask.description} {' '.join(subtask.search_queries)}"


async def page_quotes(
    run: RunResources, state: WorkerState, url: str, page: FetchedPage
) -> tuple[list[PageQuote], Usage]:
    """Quotes from a page read whole: the model's, checked word for word against the page;
    when it gives none that check out (or fails), the sentences nearest the subtask."""
    settings = run.settings
    subtask = state["subtask"]
    room = int(settings.max_context_tokens * PAGE_SHARE) * 3  # characters, roughly
    query = _task_words(state)
    passages: Sequence[str] = page.passages
    if sum(len(p) + 2 for p in passages) > room:  # too long to read at once: its best parts
        passages = best_passages(passages, query, room).split("\n\n")
    usage, kept = Usage(), []
    if run.model_budget_spent():  # no model call past the run's budget: the nearest sentences
        return [PageQuote(text=s) for s in best_sentences(page.passages, query, 3)], usage
    try:
        answer, usage = await ask(
            PageQuotes,
            prompts.page_quotes(
                state["question"],
                subtask,
                url,
                page.title,
                passages,
                settings.max_context_tokens,
                language=run_language(state["question"], settings.language),
                max_quotes=quotes_per_page(settings),
            ),
            role="researcher",
            client=run.model_client(),
        )
        kept = _kept_quotes(answer, page.text, quotes_per_page(settings))
    except MODEL_ERRORS as error:  # the page is real even when its quoting failed
        usage = _usage_of(error)
    if not kept:
        kept = [PageQuote(text=s) for s in best_sentences(page.passages, query, 3)]
    return kept, usage


def _page_text(page: ReadPage) -> str:
    """A page read, as the model reads the result: what was kept, not the quotes and links
    themselves, which the evidence lists under the page at every decide (sent twice, they
    cost each later round their tokens again)."""
    if page.error:
        return f"not read: {page.error}"
    return (
        f"{prompts.one_line(page.title)} — {page.url}\nQuotes kept: {len(page.quotes)}, "
        f"links found: {len(page.links)}; both are listed under the page in the evidence."
    )[:RESULT_CHARS]


async def _read_page(run: RunResources, state: WorkerState, url: str) -> str:
    """Read one page whole through the run's guarded reader and keep quotes and links."""
    found = next((h.title for h in state.get("hits", []) if h.url == url), "")
    emit(WorkerReading(**budget_use(state), url=url, title=found[:200]))
    with counted_fetches() as fetches:  # booked by the reader; state learns of it here
        fetched = await run.pages.page(url)
    fetch = Usage(page_fetches=fetches[0])
    if not fetched.passages:
        page = ReadPage(url=url, error=fetched.error or "the page holds no readable text")
        return ToolOutcome(text=_page_text(page), page=page, usage=fetch).model_dump_json(
            exclude_defaults=True
        )
    quotes, usage = await page_quotes(run, state, url, fetched)
    usage = usage + fetch
    title = fetched.title or found
    ranked = ranked_links(fetched.found_links(), _task_words(state))
    links = [PageLink(**link._asdict()) for link in prompts.kept_links(ranked)]
    page = ReadPage(
        url=url, title=title[:300], quotes=quotes, links=links, published=fetched.published
    )
    # saved as the call's outcome without the links earlier rounds' pages list (`act` keeps
    # none of them either); the model is told of every link found
    (kept,) = prompts.unlisted_links(state.get("read_pages", []), [page])
    return ToolOutcome(text=_page_text(page), page=kept, usage=usage).model_dump_json(
        exclude_defaults=True
    )


def _skipped(why: str) -> ToolOutcome:
    """A call not run, with the reason its model is told."""
    return ToolOutcome(text=f"not run: {why}", skipped=True)


def _planned(
    state: WorkerState, box: Toolbox, run: RunResources
) -> list[ToolOutcome | tuple[str, object]]:
    """Each pending call, in order: what runs (a kind and its argument), or why it does not.
    Budgets are shared out in call order, so the calls of one round never overspend."""
    sent = list(state.get("sent_queries", []))
    searches = searches_left(state, run)
    targets, pages, mcp = read_targets(state), pages_left(state, run), mcp_left(state)
    plan: list[ToolOutcome | tuple[str, object]] = []
    for call in state["pending_round"].calls:
        if call.name == WEB_SEARCH:
            queries = distinct(call.args.get("queries", []), already=sent, limit=1_000)
            queries = queries[:searches]
            sent, searches = sent + queries, searches - len(queries)
            plan.append(("search", queries) if queries else _skipped("no new query in budget"))
        elif call.name == SEARCH_DOCUMENTS:
            query = distinct([str(call.args.get("query", ""))], already=sent, limit=1)
            query = query[:searches]
            sent, searches = sent + query, searches - len(query)
            plan.append(("documents", query) if query else _skipped("no new query in budget"))
        elif call.name == READ_PAGE:
            key = normalize_url(str(call.args.get("url", "")))
            if key not in targets:
                plan.append(_skipped("not a URL listed in the evidence, or already read"))
            elif pages <= 0:
                plan.append(_skipped("no page reads left in the budget"))
            else:
                pages -= 1
                plan.append(("read", targets.pop(key)))
        elif call.name in box.mcp:
            if mcp <= 0:
                plan.append(_skipped("no MCP tool calls left in the budget"))
            else:
                mcp -= 1
                plan.append(("mcp", (*box.mcp[call.name], call.args)))
        elif call.name == FINISH:
            plan.append(ToolOutcome(text="finished"))
        else:
            plan.append(_skipped(f"{call.name} is not a tool of this worker"))
    return plan


async def _run(run: RunResources, state: WorkerState, kind: str, argument: object) -> str:
    """One planned call."""
    if kind in ("search", "documents"):
        return await _web_search(run, argument, kind == "documents")  # type: ignore[arg-type]
    if kind == "mcp":
        return await _mcp_call(run, *argument)  # type: ignore[misc]
    return await _read_page(run, state, argument)  # type: ignore[arg-type]


async def _mcp_call(run: RunResources, server: str, tool: str, args: dict) -> str:
    """One allowed MCP tool with the model's arguments; its answer is a hit (cited like any)."""
    tools = run.mcp_tools
    try:
        if tools is None:
            raise ToolFailed("no MCP server is configured")
        hit = await tools.call(server, tool, args)
    except (ToolFailed, TimeoutError) as error:
        why = redact(" ".join(f"{server}/{tool}: {type(error).__name__}: {error}".split()))[:300]
        return ToolOutcome(text=f"failed: {why}", errors=[why]).model_dump_json(
            exclude_defaults=True
        )
    # the door every search hit passes: no control characters, an address that parses, and
    # a web address the run's source filter allows (`domain.source_filter`)
    admitted = admitted_hits([hit], run.dropped_addresses)
    kept = SourceFilter.of(run.settings).kept(admitted, datetime.now(UTC))
    if not kept:
        refused = SourceFilter.of(run.settings).refusal(hit.url) if admitted else None
        why = f"not kept: {refused or 'its address does not parse'}"
        return ToolOutcome(text=f"{server}/{tool}: {why}"[:RESULT_CHARS]).model_dump_json(
            exclude_defaults=True
        )
    (hit,) = kept
    text = f"{prompts.one_line(hit.title)} — {hit.url}\n{hit.content}"[:RESULT_CHARS]
    return ToolOutcome(text=text, hits=[hit] if hit.content else []).model_dump_json(
        exclude_defaults=True
    )


def _saved_outcome(saved: str | dict) -> ToolOutcome:
    """A tool call's outcome as its task saved it: JSON text without the fields at their
    defaults (one string, which the garbage collector never walks, where its parsed form is a
    dict, a list and more per quote), or the parsed form a checkpoint written before kept."""
    if isinstance(saved, str):
        return ToolOutcome.model_validate_json(saved)
    return ToolOutcome.model_validate(saved)


async def act(state: WorkerState, *, runs: LiveRuns) -> dict:
    """Act: run the chosen calls at once within the budget, each a saved task, and append the
    round (calls and results) to the worker's conversation."""
    pending = state["pending_round"]
    run = runs.for_worker(state)
    number = len(state.get("tool_rounds", [])) + 1
    box = toolbox(search=True, pages=True, documents=True, mcp=await mcp_specs(run))
    plan = _planned(state, box, run)

    async def outcome(index: int, step: ToolOutcome | tuple[str, object]) -> ToolOutcome | str:
        if isinstance(step, ToolOutcome):
            return step
        call = pending.calls[index]
        return await durable_tool(_call_key(state, number, call), lambda: _run(run, state, *step))

    async with run.worker_slots:
        saved = await asyncio.gather(*(outcome(i, s) for i, s in enumerate(plan)))
    # read into models once all have ended: the step's tasks hold each saved outcome till then,
    # and a model of each besides, while the slowest call waits, held every page read twice
    outcomes = [o if isinstance(o, ToolOutcome) else _saved_outcome(o) for o in saved]
    # kept without the links the evidence already lists (those it would never show again)
    read = [o.page for o in outcomes if o.page is not None]
    pages = prompts.unlisted_links(state.get("read_pages", []), read)
    round_ = pending.model_copy(update={"results": [o.text for o in outcomes]})
    counts: dict[str, int] = {}
    for call, done in zip(pending.calls, outcomes, strict=True):
        if not done.skipped:
            counts[call.name] = counts.get(call.name, 0) + 1
    update = {
        "sent_queries": state.get("sent_queries", []) + [q for o in outcomes for q in o.queries],
        "hits": [hit for o in outcomes for hit in o.hits],  # after the earlier ones
        "search_errors": state.get("search_errors", []) + [e for o in outcomes for e in o.errors],
        "read_pages": pages,  # added to the earlier ones (a `DeltaChannel`)
        "tool_rounds": [round_],
        "pending_round": None,
        "mcp_calls_used": state.get("mcp_calls_used", 0)
        + sum(isinstance(step, tuple) and step[0] == "mcp" for step in plan),
        "usage": sum((o.usage for o in outcomes), Usage()),
    }
    emit(
        WorkerActed(
            **budget_use(
                {**state, **update, "tool_rounds": [*state.get("tool_rounds", []), round_]}
            ),
            protocol=state.get("tool_protocol", "native"),
            calls=counts,
            pages_read=sum(not p.error for p in pages),
            skipped=sum(o.skipped for o in outcomes),
        )
    )
    if any(call.name == FINISH for call in pending.calls):
        update["termination_reason"] = "finished"
    return update


# ---------------------------------------------------------------- evidence


def evidence_hits(hits: list[SearchHit], pages: list[ReadPage]) -> list[SearchHit]:
    """The worker's evidence for its findings: each page read (its quotes, verbatim, as its
    content; the date it states, else its search hit's) first, then the other hits."""
    read = [page for page in pages if page.quotes]
    keys = {normalize_url(page.url) for page in read}
    dated = {normalize_url(hit.url): hit.published for hit in hits if hit.published}
    first = [
        SearchHit(
            url=p.url,
            title=p.title,
            content="\n".join(q.text for q in p.quotes),
            published=p.published or dated.get(normalize_url(p.url), ""),
        )
        for p in read
    ]
    return first + [hit for hit in hits if normalize_url(hit.url) not in keys]


def worker_quotes(pages: list[ReadPage], ids: dict[str, int]) -> list[Quote]:
    """Every kept quote with the worker-local id of its source (`ids`: normalized URL -> id)."""
    return [
        Quote(source_id=ids[normalize_url(page.url)], text=q.text, claim=q.claim)
        for page in pages
        if normalize_url(page.url) in ids
        for q in page.quotes
    ]
