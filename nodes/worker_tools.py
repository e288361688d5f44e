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
from datetime import UTC, datetime

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from deep_research.domain.budgets import queries_left, tool_rounds_left
from deep_research.domain.context import clip, estimate_tokens
from deep_research.domain.distinct import distinct
from deep_research.domain.fences import data_section
from deep_research.domain.language import run_language
from deep_research.domain.source_filter import SourceFilter
from deep_research.domain.sources import normalize_url
from deep_research.domain.verbatim import FlatPage, best_sentences
from deep_research.nodes import prompts
from deep_research.nodes.worker_search import admitted_hits, budget_use, search_once
from deep_research.state import (
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
from deep_research.tools.events import WorkerActed, WorkerFellBack, emit
from deep_research.tools.run_resources import LiveRuns, RunResources, worker_key
from deep_research.tools.search.pages import FetchedPage, best_passages
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
MAX_QUOTES = 8  # quotes kept per page read
MAX_LINKS = 40  # links kept per page read
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
        link for page in pages for link in page.links
    ]
    targets: dict[str, str] = {}
    for url in listed:
        key = normalize_url(url)
        if _readable(url) and key not in done:
            targets.setdefault(key, url)
    return targets


def pages_left(state: WorkerState) -> int:
    """Pages this worker may still read."""
    return max(0, state["budget"].max_pages - len(state.get("read_pages", [])))


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
    searches = queries_left(state["budget"], len(state.get("sent_queries", []))) > 0
    return toolbox(
        search=searches,
        pages=pages_left(state) > 0 and bool(read_targets(state)),
        documents=searches and run.documents_cache is not None,
        mcp=await mcp_specs(run) if mcp_left(state) else [],
    )


def _budget_text(state: WorkerState) -> str:
    """What the worker may still spend, in words its model reads."""
    sent = len(state.get("sent_queries", []))
    rounds = tool_rounds_left(state["budget"], len(state.get("tool_rounds", [])))
    return (
        f"{queries_left(state['budget'], sent)} searches, {pages_left(state)} page reads, "
        f"{rounds} rounds (this one included)"
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
    state: WorkerState, box: Toolbox, protocol: Protocol, run: RunResources
) -> list[BaseMessage]:
    """The worker's conversation: the subtask, evidence and budget, then its latest rounds
    (the first part takes half the context budget at most, the rounds the rest)."""
    settings = run.settings
    messages = prompts.worker_tools(
        state["question"],
        state["subtask"],
        prompts.tool_evidence(state.get("hits", []), state.get("read_pages", [])),
        _budget_text(state),
        settings.max_context_tokens // 2,  # the rounds take the other half at most
        language=run_language(state["question"], settings.language),
        tool_list=box.prompt_text() if protocol == "prompt" else "",
        earlier=state.get("earlier_findings", []),
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
    if not tool_rounds_left(state["budget"], len(rounds)):
        return {"termination_reason": "budget_spent"}
    run = runs.for_worker(state)
    box = await offered(state, run)
    if box.names == [FINISH]:  # nothing left to spend on
        return {"termination_reason": "budget_spent"}
    async with run.worker_slots:
        if run.budget_spent():
            return {"termination_reason": "run_budget_spent"}
        try:
            choice = await choose_tools(
                lambda protocol: conversation(state, box, protocol, run),
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


async def _web_search(run: RunResources, queries: list[str], documents: bool = False) -> dict:
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
    return outcome.model_dump(mode="json")


def _kept_quotes(answer: PageQuotes, text: str) -> list[PageQuote]:
    """The model's quotes that the page holds, as the page words them (repeats dropped)."""
    kept: dict[str, PageQuote] = {}
    page = FlatPage(text)  # flattened once, not once per quote
    for quote in answer.quotes:
        words = page.verbatim(quote.text)
        if words and words not in kept:
            kept[words] = PageQuote(text=words, claim=" ".join(quote.claim.split())[:300])
    return list(kept.values())[:MAX_QUOTES]


async def page_quotes(
    run: RunResources, state: WorkerState, url: str, page: FetchedPage
) -> tuple[list[PageQuote], Usage]:
    """Quotes from a page read whole: the model's, checked word for word against the page;
    when it gives none that check out (or fails), the sentences nearest the subtask."""
    settings = run.settings
    subtask = state["subtask"]
    room = int(settings.max_context_tokens * PAGE_SHARE) * 3  # characters, roughly
    query = f"{subtask.description} {' '.join(subtask.search_queries)}"
    passages = page.passages
    if sum(len(p) + 2 for p in passages) > room:  # too long to read at once: its best parts
        passages = best_passages(passages, query, room).split("\n\n")
    text = "\n\n".join(page.passages)
    usage, kept = Usage(), []
    if run.budget_spent():  # no model call past the run's budget: the nearest sentences
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
                max_quotes=MAX_QUOTES,
            ),
            role="researcher",
            client=run.model_client(),
        )
        kept = _kept_quotes(answer, text)
    except MODEL_ERRORS as error:  # the page is real even when its quoting failed
        usage = _usage_of(error)
    if not kept:
        kept = [PageQuote(text=s) for s in best_sentences(page.passages, query, 3)]
    return kept, usage


def _page_text(page: ReadPage) -> str:
    """A page read, as the model reads the result: its quotes and claims, then its links."""
    if page.error:
        return f"not read: {page.error}"
    quotes = "\n".join(
        f'- "{q.text}"' + (f" (supports: {q.claim})" if q.claim else "") for q in page.quotes
    )
    links = "\n".join(page.links[: prompts.LINKS_SHOWN])
    return (
        f"{prompts.one_line(page.title)} — {page.url}\nQuotes kept:\n{quotes or '(none)'}"
        + (f"\nLinks on the page:\n{links}" if links else "")
    )[:RESULT_CHARS]


async def _read_page(run: RunResources, state: WorkerState, url: str) -> dict:
    """Read one page whole through the run's guarded reader and keep quotes and links."""
    fetched = await run.pages.page(url)
    if not fetched.passages:
        page = ReadPage(url=url, error=fetched.error or "the page holds no readable text")
        return ToolOutcome(text=_page_text(page), page=page).model_dump(mode="json")
    quotes, usage = await page_quotes(run, state, url, fetched)
    title = fetched.title or next((h.title for h in state.get("hits", []) if h.url == url), "")
    page = ReadPage(url=url, title=title[:300], quotes=quotes, links=fetched.links[:MAX_LINKS])
    return ToolOutcome(text=_page_text(page), page=page, usage=usage).model_dump(mode="json")


def _skipped(why: str) -> ToolOutcome:
    """A call not run, with the reason its model is told."""
    return ToolOutcome(text=f"not run: {why}", skipped=True)


def _planned(state: WorkerState, box: Toolbox) -> list[ToolOutcome | tuple[str, object]]:
    """Each pending call, in order: what runs (a kind and its argument), or why it does not.
    Budgets are shared out in call order, so the calls of one round never overspend."""
    budget = state["budget"]
    sent = list(state.get("sent_queries", []))
    targets, pages, mcp = read_targets(state), pages_left(state), mcp_left(state)
    plan: list[ToolOutcome | tuple[str, object]] = []
    for call in state["pending_round"].calls:
        if call.name == WEB_SEARCH:
            queries = distinct(call.args.get("queries", []), already=sent, limit=1_000)
            queries = queries[: queries_left(budget, len(sent))]
            sent += queries
            plan.append(("search", queries) if queries else _skipped("no new query in budget"))
        elif call.name == SEARCH_DOCUMENTS:
            query = distinct([str(call.args.get("query", ""))], already=sent, limit=1)
            query = query[: queries_left(budget, len(sent))]
            sent += query
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


async def _run(run: RunResources, state: WorkerState, kind: str, argument: object) -> dict:
    """One planned call."""
    if kind in ("search", "documents"):
        return await _web_search(run, argument, kind == "documents")  # type: ignore[arg-type]
    if kind == "mcp":
        return await _mcp_call(run, *argument)  # type: ignore[misc]
    return await _read_page(run, state, argument)  # type: ignore[arg-type]


async def _mcp_call(run: RunResources, server: str, tool: str, args: dict) -> dict:
    """One allowed MCP tool with the model's arguments; its answer is a hit (cited like any)."""
    tools = run.mcp_tools
    try:
        if tools is None:
            raise ToolFailed("no MCP server is configured")
        hit = await tools.call(server, tool, args)
    except (ToolFailed, TimeoutError) as error:
        why = redact(" ".join(f"{server}/{tool}: {type(error).__name__}: {error}".split()))[:300]
        return ToolOutcome(text=f"failed: {why}", errors=[why]).model_dump(mode="json")
    # the door every search hit passes: no control characters, an address that parses, and
    # a web address the run's source filter allows (`domain.source_filter`)
    admitted = admitted_hits([hit], run.dropped_addresses)
    kept = SourceFilter.of(run.settings).kept(admitted, datetime.now(UTC))
    if not kept:
        refused = SourceFilter.of(run.settings).refusal(hit.url) if admitted else None
        why = f"not kept: {refused or 'its address does not parse'}"
        return ToolOutcome(text=f"{server}/{tool}: {why}"[:RESULT_CHARS]).model_dump(mode="json")
    (hit,) = kept
    text = f"{prompts.one_line(hit.title)} — {hit.url}\n{hit.content}"[:RESULT_CHARS]
    return ToolOutcome(text=text, hits=[hit] if hit.content else []).model_dump(mode="json")


async def act(state: WorkerState, *, runs: LiveRuns) -> dict:
    """Act: run the chosen calls at once within the budget, each a saved task, and append the
    round (calls and results) to the worker's conversation."""
    pending = state["pending_round"]
    run = runs.for_worker(state)
    number = len(state.get("tool_rounds", [])) + 1
    box = toolbox(search=True, pages=True, documents=True, mcp=await mcp_specs(run))
    plan = _planned(state, box)

    async def outcome(index: int, step: ToolOutcome | tuple[str, object]) -> ToolOutcome:
        if isinstance(step, ToolOutcome):
            return step
        call = pending.calls[index]
        saved = await durable_tool(_call_key(state, number, call), lambda: _run(run, state, *step))
        return ToolOutcome.model_validate(saved)

    async with run.worker_slots:
        outcomes = await asyncio.gather(*(outcome(i, s) for i, s in enumerate(plan)))
    pages = [o.page for o in outcomes if o.page is not None]
    round_ = pending.model_copy(update={"results": [o.text for o in outcomes]})
    counts: dict[str, int] = {}
    for call, done in zip(pending.calls, outcomes, strict=True):
        if not done.skipped:
            counts[call.name] = counts.get(call.name, 0) + 1
    update = {
        "sent_queries": state.get("sent_queries", []) + [q for o in outcomes for q in o.queries],
        "hits": state.get("hits", []) + [hit for o in outcomes for hit in o.hits],
        "search_errors": state.get("search_errors", []) + [e for o in outcomes for e in o.errors],
        "read_pages": state.get("read_pages", []) + pages,
        "tool_rounds": [*state.get("tool_rounds", []), round_],
        "pending_round": None,
        "mcp_calls_used": state.get("mcp_calls_used", 0)
        + sum(isinstance(step, tuple) and step[0] == "mcp" for step in plan),
        "usage": sum((o.usage for o in outcomes), Usage()),
    }
    emit(
        WorkerActed(
            **budget_use({**state, **update}),
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
    content) first, then the other hits."""
    read = [page for page in pages if page.quotes]
    keys = {normalize_url(page.url) for page in read}
    first = [
        SearchHit(url=p.url, title=p.title, content="\n".join(q.text for q in p.quotes))
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
