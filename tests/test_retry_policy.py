"""One retry policy for models and searches: what is transient is read from the error's type
and HTTP status, never from its text; the wait honours Retry-After."""

from __future__ import annotations

import httpx
import httpx2
import openai
import pytest
from ddgs.exceptions import DDGSException

from deep_research.tools.retry_policy import is_transient, retry_after, retry_delay
from deep_research.tools.search.base import SearchKeyRejected, SearchRateLimited
from deep_research.tools.search.duckduckgo import DuckDuckGoUnavailable
from deep_research.tools.streaming import EmptyStream

REQUEST = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")


def api_error(status: int, headers: dict | None = None) -> openai.APIStatusError:
    response = httpx.Response(status, request=REQUEST, headers=headers or {})
    return openai.APIStatusError("failed", response=response, body=None)


def http_error(status: int) -> httpx.HTTPStatusError:
    response = httpx.Response(status, request=REQUEST)
    return httpx.HTTPStatusError("failed", request=REQUEST, response=response)


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (api_error(429), True),
        (api_error(408), True),
        (api_error(409), True),
        (api_error(500), True),
        (api_error(503), True),
        (api_error(400), False),
        (api_error(401), False),
        (api_error(404), False),
        (http_error(502), True),
        (http_error(429), True),
        (http_error(403), False),
        (openai.APITimeoutError(REQUEST), True),
        (openai.APIConnectionError(request=REQUEST), True),
        (httpx.ConnectError("refused"), True),
        (httpx2.RemoteProtocolError("server disconnected"), True),  # the chat servers' stack
        (TimeoutError(), True),
        (EmptyStream("nothing"), True),
        (SearchRateLimited("slow down"), True),
        (SearchKeyRejected("bad key"), False),
        # the status decides, not the words: a 5xx without "HTTP 5" in its text is retried
        (DuckDuckGoUnavailable("duckduckgo is down", 503), True),
        (DuckDuckGoUnavailable("duckduckgo answered HTTP 5xx-ish", 404), False),
        (ValueError("HTTP 500"), False),
    ],
)
def test_what_is_transient(error, transient):
    assert is_transient(error) is transient


def test_a_clients_own_errors_can_be_named_transient():
    assert not is_transient(DDGSException("timed out"))
    assert is_transient(DDGSException("timed out"), also=(DDGSException,))


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
        ({"retry-after": "100000"}, 60.0),
    ],
)
def test_retry_after(headers, seconds):
    assert retry_after(httpx.Headers(headers)) == seconds


def test_the_wait_is_the_servers_else_a_jittered_backoff():
    assert retry_delay(api_error(429, {"retry-after": "2"}), attempt=1) == 2.0
    waits = [retry_delay(api_error(503), attempt=3) for _ in range(50)]
    assert all(0 <= wait <= 4.0 for wait in waits) and len(set(waits)) > 1
