"""The engine's httpx clients free a response as soon as it is closed and let go, without the
garbage collector (`tools/http_cycles.py`), and read it as before."""

from __future__ import annotations

import asyncio
import gc
import weakref

import httpx
import httpx2
import pytest

from deep_research.tools.http_cycles import let_go_when_closed, with_let_go
from deep_research.tools.models import named_model
from deep_research.tools.search.clients import SearchClients

from stand_ins.loopback import Reply, StandIn

BODY = b"zstd " * 20_000  # several chunks


class Page(StandIn):
    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        return Reply(200, raw=BODY, headers={"X-Kind": "page"})


@pytest.fixture
def page_server():
    server = Page().start()
    yield server
    server.stop()


@pytest.fixture
def no_collection():
    """Reference counting alone: what is freed here is freed without the collector."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


async def _read_and_let_go(
    client: httpx.AsyncClient | httpx2.AsyncClient, url: str
) -> tuple[weakref.ref, bytes]:
    """Stream one page whole, close it, and keep only a weak reference to the response."""
    async with client.stream("GET", url) as response:
        data = b"".join([chunk async for chunk in response.aiter_bytes()])
        assert response.headers["x-kind"] == "page"
    assert response.elapsed.total_seconds() >= 0  # still set by httpx when the stream closes
    return weakref.ref(response), data


def test_a_closed_response_is_freed_without_the_collector(page_server, no_collection):
    async def main():
        client = SearchClients().httpx_here(("test",), timeout=5)
        try:
            gone, data = await _read_and_let_go(client, f"{page_server.url}/a")
            assert data == BODY
            assert gone() is None
            whole = await client.get(f"{page_server.url}/b")  # read whole, closed by httpx
            assert whole.content == BODY and whole.headers["x-kind"] == "page"
            held = weakref.ref(whole)
            del whole
            assert held() is None
        finally:
            await client.aclose()

    asyncio.run(main())


def test_the_callers_own_hooks_still_run(page_server):
    seen: list[int] = []

    async def observe(response: httpx.Response) -> None:
        seen.append(response.status_code)

    async def main():
        client = SearchClients().httpx_here(
            ("hooked",), timeout=5, event_hooks={"response": [observe]}
        )
        try:
            assert (await client.get(f"{page_server.url}/a")).content == BODY
        finally:
            await client.aclose()

    asyncio.run(main())
    assert seen == [200]
    assert with_let_go({"request": [observe]}) == {
        "request": [observe],
        "response": [let_go_when_closed],
    }


def test_a_closed_stream_is_not_read_again(page_server):
    async def main():
        async with httpx.AsyncClient(event_hooks=with_let_go(None)) as client:
            response = await client.get(f"{page_server.url}/a")
            with pytest.raises(httpx.StreamClosed):
                async for _ in response.stream:
                    pass

    asyncio.run(main())


def test_the_model_clients_closed_responses_are_freed_without_the_collector(
    chat_server, page_server, no_collection
):
    """A chat server's client is httpx2's, which binds no response to its stream: nothing to
    let go of, and a closed response is freed as the engine's httpx clients' are."""

    async def main():
        client = named_model("stand-in-model", idle_timeout=30.0).http_async_client
        assert isinstance(client, httpx2.AsyncClient)
        gone, data = await _read_and_let_go(client, f"{page_server.url}/a")
        assert data == BODY and gone() is None

    asyncio.run(main())


def test_the_tavily_client_lets_go_of_its_responses(search_server):
    from deep_research.settings import Settings
    from deep_research.tools.search.tavily import TavilySearch

    async def built():
        return TavilySearch(Settings(), SearchClients())._client()

    assert let_go_when_closed in asyncio.run(built())._client.event_hooks["response"]


def test_a_reply_cut_off_by_the_total_cap_is_freed_too(chat_server, no_collection):
    """A server that never stops talking: the engine's cap ends the stream mid-way, and the
    response it was reading is freed as the call ends."""
    from langchain_core.messages import HumanMessage

    from deep_research.tools.streaming import stream_reply

    chat_server.stream_parts = [0.05] * 400  # a part every 50 ms, for 20 s
    chat_server.chunk_chars = 1

    async def main():
        model = named_model("stand-in-model", idle_timeout=30.0)
        with pytest.raises(TimeoutError):
            await stream_reply(model, [HumanMessage("Talk")], role="writer", total_cap=0.5)
        await asyncio.sleep(0.1)
        return [  # this server's: other tests of the process may hold responses of their own
            o
            for o in gc.get_objects()
            if isinstance(o, httpx.Response) and str(o.request.url).startswith(chat_server.url)
        ]

    assert asyncio.run(main()) == []
