"""The changing world wired for the CLI: its pages, its search and its brain on loopback."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from stand_ins.changing_world import ChangingPages, ChangingSearch, FaithfulBrain
from stand_ins.chat import ChatServer
from stand_ins.loopback import Reply

QUESTION = "What is measured about these materials?"
RUN_FLAGS = [
    "--max-iterations", "1", "--min-iterations", "1", "--fetch-pages", "1",
    "--search", "tavily", "--set", "fetch_private_addresses=true", "--quiet",
]  # fmt: skip
READ_FLAGS = ["--set", "fetch_private_addresses=true"]  # what recheck and watch --run-due read


class World:
    """The pages, the search, the model: started, and stopped together."""

    def __init__(self, topics: int, filler: int = 0) -> None:
        self.pages = ChangingPages(topics, filler).start()
        self.search = ChangingSearch(self.pages).start()
        self.brain = FaithfulBrain(topic_count=topics)
        self.chat = ChatServer(self.brain).start()

    def stop(self) -> None:
        for server in (self.chat, self.search, self.pages):
            server.stop()

    @property
    def model_calls(self) -> int:
        return len(self.chat.chat_requests)


@contextmanager
def world_on(monkeypatch: pytest.MonkeyPatch, topics: int = 3, filler: int = 0) -> Iterator[World]:
    """A world whose servers the process's environment points at."""
    world = World(topics, filler)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{world.chat.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-keeping")
    monkeypatch.setenv("DEEP_RESEARCH_MODEL", "stand-in-model")
    monkeypatch.setenv("TAVILY_API_BASE_URL", world.search.url)
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-keeping")
    try:
        yield world
    finally:
        world.stop()


def claims_at_once(target: str, stores: int = 4) -> list:
    """A watch due now in the store, claimed by `stores` connections at the same moment: every
    claim any of them got."""
    import asyncio

    from deep_research.tools.watches import Watch, WatchStore

    async def race() -> list:
        async with WatchStore(target) as store:
            await store.add(Watch("w", "q?", 86400, next_due=0.0, version=1, latest="w"))
        opened = [WatchStore(target) for _ in range(stores)]
        for store in opened:
            await store.__aenter__()
        try:
            return await asyncio.gather(*(store.claim_due() for store in opened))
        finally:
            for store in opened:
                await store.__aexit__()

    return [claim for found in asyncio.run(race()) for claim in found]


def hold_first(chat: ChatServer, contract: str) -> tuple[threading.Event, threading.Event]:
    """Hold the first request for `contract` (`held` is set) until `hold` is set, then answer
    it 503: its sender is killed meanwhile, so nothing answered it."""
    hold, held = threading.Event(), threading.Event()

    def fault(number: int, body: dict) -> Reply | None:
        if contract in json.dumps(body) and not held.is_set():
            held.set()
            hold.wait(60)
            return Reply(503, {"error": {"message": "gone"}})
        return None

    chat.fault = fault
    return hold, held
