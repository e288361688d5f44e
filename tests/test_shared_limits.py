"""Endpoint limits shared through Redis by several processes (`tools.shared_limits`).

Three real processes drive the real gate (and its httpx hooks) against one stand-in model
server, which counts what arrives: in flight at once, per second, during a 429's pause, and
after a holder is killed. Redis is started from the system's `redis-server` (tests/services.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from deep_research.state import Usage
from deep_research.tools.run_resources import LiveRuns

from stand_ins.loopback import Reply, StandIn

ROOT = Path(__file__).resolve().parents[1]

DRIVER = """
import asyncio, json, sys, time
import httpx
from deep_research.tools.endpoint_limits import Gates

async def main(url, calls, tag, gated):
    gate = Gates().model(url)
    async with httpx.AsyncClient(timeout=60) as client:
        # Warm: the connections are open before the gate counts (a first connection is slow).
        await asyncio.gather(*(client.get(f"{url}/warm") for _ in range(4)))
        hooks = gate.http_hooks()
        async def stamp(request):  # when the gate let it go (the server may see it later)
            request.headers["x-sent"] = repr(time.time())
        async def paused(response):  # after the gate's own hook has told Redis of the 429
            if response.status_code == 429:
                print(f"paused {time.time()!r}", flush=True)
        client.event_hooks = {
            "request": [*hooks["request"], stamp], "response": [*hooks["response"], paused]
        }
        print("ready", flush=True)
        if gated:  # no call before the test says go: every call comes after the moment it knows
            await asyncio.to_thread(sys.stdin.readline)
        async def one(i):
            async with gate.call():
                while True:  # a 429 is asked again, after the shared pause
                    reply = await client.post(f"{url}/chat/completions", json={"tag": tag, "n": i})
                    if reply.status_code != 429:
                        return reply.status_code
        print(json.dumps(await asyncio.gather(*(one(i) for i in range(calls)))), flush=True)

asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:] == ["gated"]))
"""


class CountingModel(StandIn):
    """A model endpoint that records when each request arrived, from which process, and can
    answer one request with a 429, hold a process's requests, or answer none until `gather`
    are in flight at once (or `expected` have come)."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds
        self.arrivals: list[tuple[float, str]] = []
        self.sent: list[tuple[float, str]] = []  # when each client's gate let a request go
        self.refuse_number: int | None = None  # this arrival gets 429 Retry-After: 2
        self.refused_at: float | None = None
        self.hold_tag: str | None = None  # requests of this process are held (until released)
        self.release = threading.Event()
        self.in_flight_calls = 0  # model calls only (not the drivers' warm-up requests)
        self.peak_in_flight = 0
        self.gather: int | None = None
        self.expected = 0
        self._changed = threading.Condition(self._lock)

    def handle(self, path: str, body: dict, headers: dict) -> Reply:
        if path.endswith("/warm"):
            time.sleep(0.1)
            return Reply(200, {"warm": True})
        with self._lock:
            self.arrivals.append((time.time(), body.get("tag", "")))
            if "x-sent" in headers:
                self.sent.append((float(headers["x-sent"]), body.get("tag", "")))
            number = len(self.arrivals)
            self.in_flight_calls += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight_calls)
            self._changed.notify_all()
            if self.gather:  # a cap of `gather` is met whatever the machine's speed
                self._changed.wait_for(self._gathered, timeout=30)
        try:
            return self._answer(number, body)
        finally:
            with self._lock:
                self.in_flight_calls -= 1

    def _gathered(self) -> bool:
        """`gather` calls are in flight at once, or every expected call has come."""
        return self.in_flight_calls >= self.gather or len(self.arrivals) >= self.expected

    def _answer(self, number: int, body: dict) -> Reply:
        if number == self.refuse_number:
            self.refused_at = time.time()
            return Reply(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "2"})
        if body.get("tag") == self.hold_tag:
            self.release.wait(30)
        time.sleep(self.seconds)
        return Reply(200, {"ok": True})


def _env(redis_url: str, **limits: str) -> dict:
    env = {**os.environ, "DEEP_RESEARCH_REDIS_URL": redis_url, "PYTHONPATH": str(ROOT.parent)}
    for name, value in limits.items():
        env[f"DEEP_RESEARCH_{name}"] = value
    return env


def _drive(
    server: CountingModel, calls: int, tag: str, env: dict, gated: bool = False
) -> subprocess.Popen:
    command = [sys.executable, "-c", DRIVER, f"{server.url}/v1", str(calls), tag]
    return subprocess.Popen(
        command + (["gated"] if gated else []),
        env=env,
        stdin=subprocess.PIPE if gated else None,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def _result(stdout: str) -> list[int]:
    """The driver's answer codes (its last line; the first says it is ready)."""
    return json.loads(stdout.splitlines()[-1])


@pytest.fixture
def model():
    server = CountingModel(seconds=0.3).start()
    yield server
    server.release.set()
    server.stop()


def test_three_processes_share_the_cap_in_flight_and_the_rate(redis_url, model):
    """Bounds that hold by construction, however busy the machine: the server answers nothing
    until 4 calls are in flight, so a cap of 4 is reached and a fifth would show; and no call
    starts before `go`, so at most 8 per second since then can have arrived (a call arrives
    after the gate let it through; a busy machine only makes it later)."""
    env = _env(
        redis_url,
        ENDPOINT_MAX_CONCURRENT_MODEL_CALLS="4",
        ENDPOINT_MODEL_CALLS_PER_MINUTE="480",  # 8 in any second
    )
    model.gather, model.expected = 4, 30
    processes = [_drive(model, 10, f"p{i}", env, gated=True) for i in range(3)]
    assert [p.stdout.readline().strip() for p in processes] == ["ready"] * 3
    go = time.time()
    for process in processes:
        process.stdin.write("go\n")
        process.stdin.flush()
    outputs = [_result(p.communicate(timeout=120)[0]) for p in processes]
    assert all(codes == [200] * 10 for codes in outputs)
    assert len(model.arrivals) == 30
    assert model.peak_in_flight == 4  # the cap binds, and holds, across the processes
    arrived = sorted(t - go for t, _ in model.arrivals)
    assert arrived[0] > 0
    for second in (1, 2, 3):  # the window is exact: 8 in any second, so 8 per second since go
        assert sum(t < second for t in arrived) <= 8 * second, arrived
    assert len({tag for _, tag in model.arrivals}) == 3


def test_a_429_to_one_process_silences_every_process_for_its_retry_after(redis_url, model):
    model.seconds = 0.1
    model.refuse_number = 6
    env = _env(redis_url, ENDPOINT_MAX_CONCURRENT_MODEL_CALLS="4")
    processes = [_drive(model, 8, f"p{i}", env) for i in range(3)]
    printed = [p.communicate(timeout=60)[0] for p in processes]
    assert all(_result(out) == [200] * 8 for out in printed)
    assert model.refused_at is not None
    # Measured where it happens, so a busy machine cannot blur it: from the moment the process
    # that got the 429 had told Redis, no gate in any process lets a request go for 2 s. (The
    # server's arrival times would not do: a request let go before the pause may be read late.)
    paused = [
        float(line.split()[1]) for out in printed for line in out.splitlines() if "paused" in line
    ]
    assert len(paused) == 1
    # 50 ms: a request whose gate looked just before the pause was written may be stamped
    # just after it was told (its process descheduled between the two lines).
    during = [
        (t - paused[0], tag) for t, tag in model.sent if paused[0] + 0.05 < t < paused[0] + 1.9
    ]
    after = {tag for t, tag in model.sent if t >= paused[0] + 1.9}
    assert during == []
    assert after == {"p0", "p1", "p2"}  # every process was silenced, then went on


def test_a_killed_holders_slots_return_within_one_lease(redis_url, model):
    lease = 2.0
    env = _env(redis_url, ENDPOINT_MAX_CONCURRENT_MODEL_CALLS="4", REDIS_LEASE_SECONDS=str(lease))
    model.hold_tag = "holder"
    holder = _drive(model, 4, "holder", env)
    deadline = time.monotonic() + 20
    while len(model.arrivals) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(model.arrivals) == 4  # the holder has every slot
    waiter = _drive(model, 1, "waiter", env)
    assert waiter.stdout.readline().strip() == "ready"  # started: it now waits for a slot
    time.sleep(lease + 0.5)  # longer than a lease: the holder is alive and renews its slots
    assert [tag for _, tag in model.arrivals].count("waiter") == 0
    os.kill(holder.pid, signal.SIGKILL)
    killed = time.time()
    holder.wait(10)
    assert _result(waiter.communicate(timeout=30)[0]) == [200]
    came = next(t for t, tag in model.arrivals if tag == "waiter")
    assert came - killed <= lease + 0.5


def test_each_test_process_flushes_only_its_own_redis_database(redis_url):
    """Test processes share one Redis: a test starting in one must not empty the keys of a
    test running in another (a flush once took a running test's leases and 429 pause). Only
    this process's database and the spare one, which no process gets, are touched here."""
    import redis

    from services import SPARE_DATABASE, database_url, worker_database

    workers = ("master", "gw0", "gw1", "gw13")
    urls = [worker_database(redis_url, worker) for worker in workers]
    assert len(set(urls)) == 4
    assert database_url(redis_url, SPARE_DATABASE) not in urls
    assert database_url("redis://127.0.0.1:6379", 3) == "redis://127.0.0.1:6379/3"
    redis.Redis.from_url(redis_url).set("kept", "1")
    redis.Redis.from_url(database_url(redis_url, SPARE_DATABASE)).flushdb()  # another's flush
    assert redis.Redis.from_url(redis_url).get("kept") == b"1"
    with pytest.raises(RuntimeError, match="at most 14"):
        worker_database(redis_url, "gw14")


def test_redis_gone_mid_run_calls_wait_then_fail_with_a_clear_error(monkeypatch):
    from deep_research.tools.endpoint_limits import Gates, Limits
    from deep_research.tools.shared_limits import SharedLimitsUnavailable

    from services import RedisServer

    server = RedisServer().start()
    monkeypatch.setenv("DEEP_RESEARCH_REDIS_URL", server.url)
    monkeypatch.setenv("DEEP_RESEARCH_REDIS_WAIT_SECONDS", "1.5")

    async def scenario():
        gate = Gates().get("test:gone", Limits(max_in_flight=2, requests_per_minute=600))
        async with gate.call():
            pass
        server.stop()  # gone: the next call waits for it, then says so
        began = time.monotonic()
        with pytest.raises(SharedLimitsUnavailable, match=r"unreachable for 1\.5 s"):
            async with gate.call():
                pass
        waited = time.monotonic() - began
        server.start()  # back within the bound: the waiting call goes through
        restart = asyncio.get_running_loop().run_in_executor(None, time.sleep, 0)
        await restart
        async with gate.call():
            pass
        return waited

    try:
        waited = asyncio.run(scenario())
    finally:
        server.stop()
    assert 1.4 <= waited < 6


def test_redis_keys_name_no_url(redis_url, monkeypatch):
    import redis

    from deep_research.tools.endpoint_limits import Gates, Limits

    monkeypatch.setenv("DEEP_RESEARCH_REDIS_URL", redis_url)
    url = "https://user:secret@models.example/v1"

    async def scenario():
        gate = Gates().get(url, Limits(max_in_flight=2, requests_per_minute=60))
        async with gate.call():
            await gate.back_off_shared(1)

    asyncio.run(scenario())
    keys = [key.decode() for key in redis.Redis.from_url(redis_url).keys("*")]
    assert keys and not any("example" in key or "secret" in key for key in keys)


class SlowExitGate:
    """A gate whose slot is given back only after an await (as a shared one awaits Redis)."""

    def __init__(self) -> None:
        self.exiting = asyncio.Event()

    def call(self):
        gate = self

        class Slot:
            async def __aenter__(self):
                return None

            async def __aexit__(self, *exc):
                gate.exiting.set()
                await asyncio.sleep(0.05)

        return Slot()


async def search_and_book(run, query: str) -> bool | None:
    """What a worker does per query: search within the run's slots, book it after."""
    async with run.search_call() as allowed:
        if not allowed:
            return None
        await asyncio.sleep(0)  # the search itself
    run.record(Usage(search_calls=1))
    return True


def test_a_search_is_booked_before_its_slot_is_given_back():
    from deep_research.settings import Settings

    async def scenario():
        run = LiveRuns().detached(Settings(max_search_calls=1))
        gate = SlowExitGate()
        run.search_gate = lambda: gate
        first = asyncio.create_task(search_and_book(run, "first"))
        await gate.exiting.wait()  # the first search is answered, its slot not yet given back
        second = await search_and_book(run, "second")
        return await first, second, run.spent

    first, second, spent = asyncio.run(scenario())
    assert first is True
    assert second is None  # the budget of one search was seen as spent
    assert spent == Usage(search_calls=1)


def test_an_unreachable_redis_at_start_is_one_line_and_exit_2(monkeypatch, capsys):
    from deep_research.cli.main import main

    from services import free_port

    monkeypatch.setenv("DEEP_RESEARCH_REDIS_URL", "")  # restored after: `--redis` sets it
    address = f"redis://127.0.0.1:{free_port()}/0"
    assert main(["run", "Compare zstd and xz", "--redis", address]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0
    assert error.startswith(f"error: Redis at {address} (shared limits) is unreachable")


def test_a_run_with_redis_shares_its_limits_there(chat_server, search_server, redis_url, tmp_path):
    import redis

    env = {**_env(redis_url, ENDPOINT_MODEL_TOKENS_PER_MINUTE="100000")}
    env["DEEP_RESEARCH_CHECKPOINT_DB"] = str(tmp_path / "c.sqlite")
    command = [sys.executable, "-m", "deep_research.cli", "run", "Compare zstd and xz"]
    command += ["--max-iterations", "1", "--min-iterations", "1", "--quiet"]
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "## Sources" in done.stdout
    keys = {key.decode() for key in redis.Redis.from_url(redis_url).keys("*")}
    assert any("deep-research" in key and key.startswith("LIMITS") for key in keys)  # tokens
    assert not any(key.endswith(":slots") for key in keys)  # every in-flight lease given back


def test_config_shows_the_redis_that_shares_the_limits_with_its_password_masked(
    monkeypatch, capsys
):
    from deep_research.cli.main import main

    monkeypatch.setenv("DEEP_RESEARCH_REDIS_URL", "redis://:s3cret-pass@127.0.0.1:6379/0")
    assert main(["config"]) == 0
    shown = capsys.readouterr().out
    assert "DEEP_RESEARCH_REDIS_URL" in shown and "redis://:***@127.0.0.1:6379/0" in shown
    assert "s3cret-pass" not in shown
