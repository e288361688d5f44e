"""The backend a run's settings choose, and what each provider needs before a run starts."""

from __future__ import annotations

from deep_research.domain.source_filter import SourceFilter
from deep_research.settings import Settings
from deep_research.tools.events import SourceFailed, emit
from deep_research.tools.evidence.reads import Capture
from deep_research.tools.local_search import HybridSearch, LocalSearch
from deep_research.tools.mcp_config import McpConfigError, read_mcp_config
from deep_research.tools.process_wide import current
from deep_research.tools.search.base import SearchBackend
from deep_research.tools.search.bocha import BochaSearch, probe_bocha
from deep_research.tools.search.clients import SearchClients
from deep_research.tools.search.duckduckgo import DuckDuckGoSearch
from deep_research.tools.search.filtered import FilteredSearch
from deep_research.tools.search.pages import PageFetcher, WholePages
from deep_research.tools.search.searxng import SearxngSearch, probe_searxng, searxng_url
from deep_research.tools.search.tavily import TavilySearch, probe_tavily

PROVIDERS = {
    "tavily": TavilySearch,
    "bocha": BochaSearch,
    "searxng": SearxngSearch,
    "duckduckgo": DuckDuckGoSearch,
}


def web_provider(settings: Settings) -> str | None:
    """The web provider a run uses: its own, hybrid's `web_backend`, or None for local."""
    if settings.search_backend == "local":
        return None
    if settings.search_backend == "hybrid":
        return settings.web_backend
    return settings.search_backend


def web_search(
    settings: Settings, name: str, clients: SearchClients, pages: PageFetcher | None = None
) -> SearchBackend:
    """The named web provider, reading whole pages for thin snippets when `fetch_pages` > 0;
    its client and TLS context are the process's (`clients`), its page budget the run's
    (`pages`: the run's page reader, which its workers' `read_page` calls share)."""
    provider = PROVIDERS[name](settings, clients)
    if settings.fetch_pages:
        fetcher = pages or PageFetcher(settings, clients.tls())
        return WholePages(provider, fetcher, settings.fetch_pages)
    return provider


def search_backend(
    settings: Settings,
    clients: SearchClients | None = None,
    pages: PageFetcher | None = None,
    on_read: Capture | None = None,
) -> SearchBackend:
    """The backend the settings choose (a web provider, the user's folder, or both), with the
    allowed tools of the MCP servers of `mcp_config` beside it, keeping only the sources the
    settings allow (domains, time range). Built per run (it holds the run's page budget, in
    `pages` when given); its clients are `clients`, by default the process's. `on_read` is told
    of every document passage and tool answer (the run's evidence; pages tell `pages`')."""
    clients = clients or current().search_clients
    backend = _with_tools(settings, _base_backend(settings, clients, pages, on_read), on_read)
    allowed = SourceFilter.of(settings)
    return FilteredSearch(backend, allowed) if allowed.active else backend


def _with_tools(
    settings: Settings, backend: SearchBackend, on_read: Capture | None = None
) -> SearchBackend:
    """The backend with the allowed tools of `mcp_config`'s servers beside it, if any."""
    if not settings.mcp_config:
        return backend
    from deep_research.tools.search.tool_sources import ToolSearch, WithToolSources

    try:
        sources = read_mcp_config(settings.mcp_config)
    except McpConfigError as error:  # unreadable since the run started: a failed source
        emit(SourceFailed(source="mcp", error=str(error)))
        return backend
    return WithToolSources(backend, ToolSearch(sources, settings.search_timeout, on_read))


def _base_backend(
    settings: Settings,
    clients: SearchClients,
    pages: PageFetcher | None,
    on_read: Capture | None = None,
) -> SearchBackend:
    """A web provider, the user's folder, or both."""
    if settings.search_backend == "local":
        return LocalSearch(settings.corpus_dir, on_read)
    if settings.search_backend == "hybrid":
        web = web_search(settings, settings.web_backend, clients, pages)
        return HybridSearch(web, LocalSearch(settings.corpus_dir, on_read))
    return web_search(settings, settings.search_backend, clients, pages)


def check_provider(settings: Settings) -> None:
    """The web provider's key or address is set and, asked in a way that searches nothing, good."""
    provider = web_provider(settings)
    if provider == "tavily":
        probe_tavily()
    elif provider == "bocha":
        probe_bocha()
    elif provider == "searxng":
        probe_searxng(searxng_url())
