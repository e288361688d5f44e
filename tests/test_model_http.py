"""A chat server is reached over httpx2 (`SearchClients.model_http`): its pool checks an idle
connection once, as it reuses it, and still drops one its server closed; the process's TLS
context, proxies from the environment and the endpoint's hooks carry over."""

from __future__ import annotations

import asyncio

import httpcore2
import httpcore2._backends.anyio as anyio_backend
import httpx2
from langchain_core.messages import HumanMessage

from deep_research.tools.model_names import Endpoint
from deep_research.tools.models import openai_model
from deep_research.tools.process_wide import ProcessWide


def _model(url: str, process: ProcessWide | None = None):
    return openai_model(
        "stand-in-model", Endpoint(base_url=url, api_key="k"), 60.0, process or ProcessWide()
    )


def test_a_burst_on_a_warm_pool_checks_each_idle_connection_about_once(chat_server, monkeypatch):
    """httpx's pool asked every idle connection whether its server had closed it each time a
    request started or ended: a burst of n calls on n idle connections polled at least n²/2
    sockets (8,096 for 40). httpx2's asks a connection as it takes it."""
    monkeypatch.setenv("DEEP_RESEARCH_ENDPOINT_MAX_CONCURRENT_MODEL_CALLS", "48")
    chat_server.latency = 0.2  # long enough for 40 calls to be in flight at once
    polled = []
    real = anyio_backend.is_socket_readable

    def counted(sock):
        polled.append(sock)
        return real(sock)

    monkeypatch.setattr(anyio_backend, "is_socket_readable", counted)

    async def two_bursts() -> int:
        model = _model(f"{chat_server.url}/v1")
        assert isinstance(model.http_async_client, httpx2.AsyncClient)
        await asyncio.gather(*(model.ainvoke([HumanMessage("hi")]) for _ in range(40)))
        polled.clear()
        await asyncio.gather(*(model.ainvoke([HumanMessage("hi")]) for _ in range(40)))
        return len(model.http_async_client._transport._pool.connections)

    assert asyncio.run(two_bursts()) == 40
    assert 40 <= len(polled) <= 80  # each reused connection once (httpx: 8,096)


def test_a_connection_the_chat_server_closed_is_not_used_again():
    """Checked once, but checked: a keep-alive connection the server closed while it sat idle
    is dropped, and the next call opens another."""
    body = (
        b'{"id":"c","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,'
        b'"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}'
    )
    answer = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )

    async def main() -> tuple[list[str], int]:
        accepted = 0

        async def answer_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
            nonlocal accepted
            accepted += 1
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            )
            await reader.readexactly(length)
            writer.write(answer)
            await writer.drain()
            writer.close()  # keep-alive promised, then the idle connection is closed

        server = await asyncio.start_server(answer_once, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        model = _model(f"http://127.0.0.1:{port}/v1")
        try:
            texts = []
            for _ in range(2):
                texts.append((await model.ainvoke([HumanMessage("hi")])).content)
                await asyncio.sleep(0.05)  # the server's close reaches the idle connection
            return texts, accepted
        finally:
            server.close()

    texts, accepted = asyncio.run(main())
    assert texts == ["ok", "ok"] and accepted == 2


def test_the_chat_client_keeps_the_process_tls_proxies_and_the_endpoint_hooks(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    process = ProcessWide()

    async def built():
        model = _model("https://chat.example/v1", process)
        return model.http_async_client, process.gates.model("https://chat.example/v1")

    client, gate = asyncio.run(built())
    tls = process.search_clients.tls()
    assert client._transport._pool._ssl_context is tls
    (proxied,) = [t for p, t in client._mounts.items() if p.matches(httpx2.URL("https://x/"))]
    assert isinstance(proxied._pool, httpcore2.AsyncHTTPProxy)  # the chat server, by the proxy
    assert proxied._pool._ssl_context is tls
    assert gate.before_request in client.event_hooks["request"]
    assert gate.observe in client.event_hooks["response"]


def test_every_request_to_a_chat_server_takes_the_same_way(chat_server, monkeypatch):
    """Chat calls, the context-window probes and the model list go over one stack, so a proxy
    setting sends all of them the same way: here a range in NO_PROXY (which httpx did not read,
    sending the probes and the list to a proxy that is not there)."""
    from deep_research.service.model_list import fetch_model_list
    from deep_research.tools.context_window import ContextWindows

    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("NO_PROXY", "127.0.0.0/8")
    for name in ("http_proxy", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    chat_server.info_paths = {
        "/props": {"default_generation_settings": {"n_ctx": 6_000}},
        "/v1/models": {"object": "list", "data": [{"id": "stand-in-model"}]},
    }
    base = f"{chat_server.url}/v1"
    process = ProcessWide()

    async def asked():
        reply = await _model(base, process).ainvoke([HumanMessage("hi")])
        window = await ContextWindows().window(base, "stand-in-model", process.gates)
        return reply.content, window

    content, window = asyncio.run(asked())
    assert content and window == 6_000
    assert fetch_model_list(base, "k") == {"object": "list", "data": [{"id": "stand-in-model"}]}
