"""Who may use `deep-research web`: loopback by default, another address only with an
authentication; Host and Origin checked, anti-forgery tokens on every state-changing request,
each user sees only their runs, and a form sets only what the operator allows."""

from __future__ import annotations

import asyncio
import contextlib
import re

import httpx
import pytest

from deep_research.cli.parser import parse_command_line
from deep_research.cli.serve_web import guard_of
from deep_research.service.admission import Admission, Operator
from deep_research.service.bad_input import BadInput
from deep_research.web.forms import FormErrors, checked_input, options_of

from web_harness import (  # noqa: F401  (the fixtures: one server for the tests with no flags)
    WebServer,
    shared_stand_ins,
    shared_web,
)

ALICE, BOB = "alice-token-0123456789abcdef", "bob-token-0123456789abcdef00"


def csrf_of(client: httpx.Client, url: str) -> str:
    """The anti-forgery token of the client's session, read from the form as a page has it."""
    page = client.get(url)
    assert page.status_code == 200, page.text
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found
    return found.group(1)


def sign_in_form(page: str) -> dict[str, str]:
    """The hidden fields of the sign-in page's form (what its button posts)."""
    return dict(re.findall(r'name="(csrf|token|next)" value="([^"]*)"', page))


@pytest.fixture
def web(request):
    """`deep-research web` with no flags, shared by the module's tests that need no others."""
    return request.getfixturevalue("shared_web")


def operator(given: dict) -> Admission:
    """The admission of a remote door whose operator set `given`."""
    return Admission(Operator(given, remote=True))


def test_a_state_changing_request_needs_the_pages_token_and_its_own_origin(web):
    with httpx.Client(base_url=web.url) as client:
        token = csrf_of(client, "/")
        form = {"question": "Compare zstd and xz", "preset": "quick"}
        assert client.post("/runs", data=form).status_code == 403  # no token
        assert client.post("/runs", data={**form, "csrf": "x" * 43}).status_code == 403
        cross = {"origin": "https://evil.example"}
        refused = client.post("/runs", data={**form, "csrf": token}, headers=cross)
        assert refused.status_code == 403
        started = client.post("/runs", data={**form, "csrf": token}, headers={"origin": web.url})
        assert started.status_code == 303 and started.headers["location"].startswith("/runs/web-")
    with httpx.Client(base_url=web.url) as stranger:  # another browser: its own token
        assert stranger.post("/runs", data={**form, "csrf": token}).status_code == 403


def test_an_unknown_host_name_is_refused(web):
    rebinding = httpx.get(f"{web.url}/", headers={"host": "attacker.example"})
    assert rebinding.status_code == 400
    page = httpx.get(f"{web.url}/")
    assert page.status_code == 200
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"


def test_tokens_keep_each_users_runs_their_own(tmp_path, chat_server, search_server):
    tokens = tmp_path / "tokens"
    tokens.write_text(f"# who may use it\nalice:{ALICE}\nbob:{BOB}\n")
    flags = ("--tokens-file", str(tokens))
    server = WebServer(tmp_path / "store.sqlite", tmp_path / "web.log", *flags).start()
    try:
        assert httpx.get(f"{server.url}/").status_code == 401
        assert (
            httpx.get(f"{server.url}/", headers={"authorization": "Bearer nope"}).status_code == 401
        )
        with httpx.Client(base_url=server.url) as alice:
            link = alice.get(f"/?token={ALICE}")  # a link offers to sign in, naming the user
            assert link.status_code == 200 and "Sign in as alice" in link.text
            assert "dr_token" not in link.headers.get("set-cookie", "")
            signed = alice.post("/sign-in", data=sign_in_form(link.text))
            assert signed.status_code == 303 and "dr_token" in signed.headers["set-cookie"]
            token = csrf_of(alice, "/")
            form = {"question": "Alice asks about zstd", "preset": "quick", "csrf": token}
            run = alice.post("/runs", data=form).headers["location"]
            assert alice.get(run).status_code == 200
            assert "Alice asks about zstd" in alice.get("/runs").text
        with httpx.Client(base_url=server.url, headers={"authorization": f"Bearer {BOB}"}) as bob:
            assert bob.get(run).status_code == 404
            assert "Alice" not in bob.get("/runs").text
            token = csrf_of(bob, "/")
            assert bob.post(f"{run}/stop", data={"csrf": token}).status_code == 404
    finally:
        server.stop()


def test_a_proxys_user_header_is_needed_when_trusted(tmp_path):
    guard = guard_of(parse_command_line(["web", "--user-header", "X-Forwarded-User"]))

    async def scenario() -> tuple[int, int]:
        async with in_process(tmp_path, guard) as client:
            nobody = await client.get("/")
            carol = await client.get("/", headers={"x-forwarded-user": "carol"})
            return nobody.status_code, carol.status_code

    assert asyncio.run(scenario()) == (401, 200)


@pytest.mark.parametrize(
    ("flags", "error"),
    [
        (["--host", "0.0.0.0"], "--allow-remote"),
        (["--host", "0.0.0.0", "--allow-remote"], "needs an authentication"),
        (["--tokens-file", "t", "--user-header", "X-User"], "choose one"),
    ],
)
def test_another_address_needs_allow_remote_and_an_authentication(flags, error):
    with pytest.raises(BadInput, match=error):
        guard_of(parse_command_line(["web", *flags]))


def test_a_port_another_server_holds_is_refused_before_serving(chat_server, home, capsys):
    import socket

    from deep_research.cli.main import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["web", "--port", str(port)]) == 2  # bad input, not 3 ("no evidence")
    err = capsys.readouterr().err
    assert f"error: cannot serve on 127.0.0.1:{port}: Address already in use" in err
    assert "choose another with --port" in err and "serving the web app" not in err
    assert not (home / "store").exists()  # refused before the run store was opened


def test_a_remote_server_with_tokens_is_allowed(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice:{ALICE}\n")
    args = ["web", "--host", "0.0.0.0", "--allow-remote", "--tokens-file", str(tokens)]
    guard = guard_of(parse_command_line([*args, "--allowed-host", "research.example"]))
    assert guard.tokens == {ALICE: "alice"} and "research.example" in guard.hosts


def test_a_short_token_is_refused_with_its_line(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("alice:short\n")
    with pytest.raises(BadInput, match="line 1"):
        guard_of(parse_command_line(["web", "--tokens-file", str(tokens)]))


def test_a_form_sets_only_what_the_operator_allows():
    valid = options_of({"preset": "quick", "language": "de", "max_search_calls": "9"})
    assert valid.overrides() == {
        "max_iterations": 1,
        "min_iterations": 1,
        "language": "de",
        "max_search_calls": 9,
    }
    sneaky = {"preset": "quick", "model": "gpt-5", "fetch_private_addresses": "true"}
    assert "model" not in options_of(sneaky).overrides()  # unknown to the form: never read
    assert "fetch_private_addresses" not in options_of(sneaky).overrides()


def test_a_corpus_outside_the_servers_folder_is_refused_beside_its_field(tmp_path):
    inside = tmp_path / "docs"
    inside.mkdir()
    form = {"question": "q about zstd", "search_backend": "local", "corpus_dir": "../../etc"}
    with pytest.raises(FormErrors) as caught:
        asyncio.run(checked_input(form, operator({"corpus_dir": str(inside)})))
    assert "not inside" in caught.value.errors["corpus_dir"]


def test_a_depth_above_the_operators_ceiling_is_refused_beside_the_depth():
    form = {"question": "q about zstd", "preset": "thorough"}
    with pytest.raises(FormErrors) as caught:
        asyncio.run(checked_input(form, operator({"max_iterations": 2, "min_iterations": 1})))
    assert "at most 2 research rounds" in caught.value.errors["preset"]  # no flag, no name
    budget = {"question": "q about zstd", "preset": "quick", "max_search_calls": "50"}
    with pytest.raises(FormErrors) as caught:
        asyncio.run(checked_input(budget, operator({"max_search_calls": 10})))
    assert "at most 10 searches" in caught.value.errors["max_search_calls"]


@contextlib.asynccontextmanager
async def in_process(tmp_path, guard):
    """The web app in this process (no server socket), a client on its loopback name."""
    from deep_research.web.app import serving

    async with serving(str(tmp_path / "store.sqlite"), QUICK_SERVER, guard) as app:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            yield client


QUICK_SERVER = {"max_iterations": 1, "min_iterations": 1}


def tokens_guard():
    from deep_research.web.guard import Guard

    return Guard(["127.0.0.1"], tokens={ALICE: "alice", BOB: "bob"})


def test_a_token_link_never_swaps_a_session_nor_leads_off_the_site(tmp_path):
    async def scenario() -> None:
        async with in_process(tmp_path, tokens_guard()) as client:
            client.cookies.set("dr_token", BOB)  # Bob is signed in; Alice's link reaches him
            link = await client.get(f"/runs?token={ALICE}")
            assert link.status_code == 200 and "dr_token" not in str(link.headers)
            assert "You are signed in as bob" in link.text and "Sign in as alice" in link.text
            still = await client.get("/runs")  # his session is his: nothing was swapped
            assert still.status_code == 200
            assert client.cookies.get("dr_token") == BOB
            off_site = "http://127.0.0.1//evil.example/?token="  # a path a browser reads as a host
            away = await client.get(httpx.URL(off_site + BOB))  # his own link: back, on this site
            assert away.status_code == 303 and away.headers["location"] == "/evil.example/"
            other = await client.get(httpx.URL(off_site + ALICE))
            assert sign_in_form(other.text)["next"] == "/evil.example/"
            forged = await client.post("/sign-in", data={**sign_in_form(other.text), "csrf": "x"})
            assert forged.status_code == 403 and client.cookies.get("dr_token") == BOB

    asyncio.run(scenario())


def test_a_large_or_multipart_body_is_refused_before_it_is_read(tmp_path):
    sent = {"bytes": 0}

    async def body(total: int):
        chunk = b"a" * 65536
        while sent["bytes"] < total:
            sent["bytes"] += len(chunk)
            yield chunk

    async def scenario() -> tuple[int, int, int]:
        async with in_process(tmp_path, tokens_guard()) as client:
            client.cookies.set("dr_token", ALICE)
            multipart = {"content-type": "multipart/form-data; boundary=x"}
            typed = await client.post("/runs", content=body(1 << 30), headers=multipart)
            read_multipart = sent["bytes"]
            sent["bytes"] = 0
            form = {"content-type": "application/x-www-form-urlencoded"}
            large = await client.post("/runs", content=body(1 << 30), headers=form)
            return typed.status_code, read_multipart, large.status_code

    typed, read_multipart, large = asyncio.run(scenario())
    assert (typed, large) == (415, 413)
    assert read_multipart <= 65536 and sent["bytes"] <= 512 * 1024  # not 1 GiB, not to disk


def test_an_event_id_that_is_no_number_starts_from_the_beginning(
    tmp_path, chat_server, search_server
):
    async def scenario() -> list[int]:
        async with in_process(tmp_path, tokens_guard()) as client:
            client.cookies.set("dr_token", ALICE)
            token = re.search(r'name="csrf" value="([^"]+)"', (await client.get("/")).text)[1]
            form = {"question": "Compare zstd and xz", "preset": "quick", "csrf": token}
            run = (await client.post("/runs", data=form)).headers["location"]
            codes = []
            for asked in ({"params": {"after": "²"}}, {"headers": {"last-event-id": "9" * 5000}}):
                async with client.stream("GET", f"{run}/events", **asked) as answer:
                    codes.append(answer.status_code)
                    text = "".join([chunk async for chunk in answer.aiter_text()])
                    assert "event: end" in text and "Traceback" not in text
            return codes

    assert asyncio.run(scenario()) == [200, 200]
