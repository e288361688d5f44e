"""What a process pays once, paid once: context-window probes (at once, once per endpoint and
model, whoever asks at the same moment) and the language detector's model (loaded once, also
when several runs detect a language at the same moment)."""

from __future__ import annotations

import asyncio
import threading
import time

from deep_research.domain import language
from deep_research.tools.context_window import PROBES, ContextWindows
from deep_research.tools.endpoint_limits import Gates

PROBE_PATHS = ("/props", "/v1/models", "/api/v0/models/m", "/api/ps", "/api/show")


def probes_sent(chat_server) -> list[str]:
    return [r["path"] for r in chat_server.requests if r["path"] in PROBE_PATHS]


def test_runs_asking_at_once_share_one_round_of_probes_sent_at_once(chat_server):
    chat_server.info_latency = 0.3  # each probe takes a remote server's round trip
    chat_server.info_paths["/props"] = {"n_ctx": 6_000}  # llama.cpp's server tells
    windows = ContextWindows()

    async def sixteen_runs() -> list[int | None]:
        gates = Gates()
        asked = [windows.window(f"{chat_server.url}/v1", "m", gates) for _ in range(16)]
        return await asyncio.gather(*asked)

    assert asyncio.run(sixteen_runs()) == [6_000] * 16
    assert sorted(probes_sent(chat_server)) == sorted(PROBE_PATHS)  # once each
    # At once, measured by the server (not by a clock a busy machine slows): each of the four
    # probes' first request came before any probe had its answer. (Ollama's asks a second
    # path, /api/show, after its first.)
    firsts = [r for r in chat_server.requests if r["path"] in PROBE_PATHS[:4]]
    assert len(PROBES) == 4 and len(firsts) == 4
    assert max(r["started"] for r in firsts) < min(r["ended"] for r in firsts)
    assert asyncio.run(windows.window(f"{chat_server.url}/v1", "m", Gates())) == 6_000
    assert len(probes_sent(chat_server)) == 5  # remembered


def test_a_caller_cancelled_while_the_probes_run_leaves_them_to_the_others(chat_server):
    chat_server.info_latency = 0.3
    chat_server.info_paths["/v1/models"] = {"data": [{"id": "m", "max_model_len": 8_000}]}
    windows = ContextWindows()

    async def one_gives_up() -> int | None:
        gates = Gates()
        first = asyncio.ensure_future(windows.window(f"{chat_server.url}/v1", "m", gates))
        second = asyncio.ensure_future(windows.window(f"{chat_server.url}/v1", "m", gates))
        await asyncio.sleep(0.1)
        first.cancel()
        return await second

    assert asyncio.run(one_gives_up()) == 8_000


def test_the_language_model_loads_once_when_runs_detect_at_the_same_moment(monkeypatch):
    from py3langid.langid import LanguageIdentifier

    monkeypatch.setattr(language, "_IDENTIFIERS", {})
    loads = []
    real = LanguageIdentifier.from_model_file

    def slow_load(*args, **kwargs):
        loads.append(threading.get_ident())
        time.sleep(0.2)  # the model takes a while to load: every thread arrives meanwhile
        return real(*args, **kwargs)

    monkeypatch.setattr(LanguageIdentifier, "from_model_file", staticmethod(slow_load))
    questions = ["Comparer zstd et xz pour les archives de journaux"] * 8

    async def eight_runs() -> list[str]:
        return await asyncio.gather(
            *(asyncio.to_thread(language.detect_language, q) for q in questions)
        )

    assert asyncio.run(eight_runs()) == ["fr"] * 8
    assert len(loads) == 1
