"""Who may use `deep-research web`: loopback by default, another address only with an
authentication; Host and Origin checked, anti-forgery tokens on every state-changing request,
each user sees only their runs, and a form sets only what the operator allows."""

from __future__ import annotations

import asyncio
import re

import httpx
import pytest

from deep_research.cli.bad_input import BadInput
from deep_research.cli.parser import parse_command_line
from deep_research.web.command import guard_of
from deep_research.web.forms import FormErrors, checked_input, options_of

from web_harness import WebServer

ALICE, BOB = "alice-token-0123456789abcdef", "bob-token-0123456789abcdef00"


def csrf_of(client: httpx.Client, url: str) -> str:
    """The anti-forgery token of the client's session, read from the form as a page has it."""
    page = client.get(url)
    assert page.status_code == 200, page.text
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found
    return found.group(1)


@pytest.fixture
def web(tmp_path, chat_server, search_server):
    server = WebServer(tmp_path / "store.sqlite", tmp_path / "web.log").start()
    yield server
    server.stop()


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
            link = alice.get(f"/?token={ALICE}")  # a link with the token sets its cookie
            assert link.status_code == 303 and "dr_token" in link.headers["set-cookie"]
            alice.cookies.set("dr_token", ALICE)
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


def test_a_proxys_user_header_is_needed_when_trusted(tmp_path, chat_server, search_server):
    flags = ("--user-header", "X-Forwarded-User")
    server = WebServer(tmp_path / "store.sqlite", tmp_path / "web.log", *flags).start()
    try:
        assert httpx.get(f"{server.url}/").status_code == 401
        assert httpx.get(f"{server.url}/", headers={"x-forwarded-user": "carol"}).status_code == 200
    finally:
        server.stop()


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
        asyncio.run(checked_input(form, {"corpus_dir": str(inside)}))
    assert "not inside" in caught.value.errors["corpus_dir"]


def test_a_depth_above_the_operators_ceiling_is_refused_beside_the_depth():
    form = {"question": "q about zstd", "preset": "thorough"}
    with pytest.raises(FormErrors) as caught:
        asyncio.run(checked_input(form, {"max_iterations": 2, "min_iterations": 1}))
    assert "above this server's ceiling 2" in caught.value.errors["preset"]
    budget = {"question": "q about zstd", "preset": "quick", "max_search_calls": "50"}
    with pytest.raises(FormErrors) as caught:
        asyncio.run(checked_input(budget, {"max_search_calls": 10}))
    assert "ceiling 10" in caught.value.errors["max_search_calls"]
