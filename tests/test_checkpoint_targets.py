"""Checkpoint store names (issue 20, items 7 and 10): driver-style and upper-case PostgreSQL URLs
are PostgreSQL, other URLs are refused masked, and a corrupted SQLite file is one line."""

from __future__ import annotations

import pytest

from deep_research.cli.main import main
from deep_research.tools.checkpoints import StoreUnreadable, is_postgres, store_target


@pytest.mark.parametrize(
    "url",
    [
        "postgresql+psycopg://u:pw@h/db",
        "POSTGRESQL://u:pw@h/db",
        "postgres+psycopg2://u:pw@h/db",
        "PostgreSQL+PSYCOPG://u:pw@h/db",
    ],
)
def test_driver_style_and_upper_case_postgres_urls_are_postgres(url):
    assert is_postgres(url)
    assert store_target(url) == "postgresql://u:pw@h/db"


def test_another_url_is_refused_with_its_password_masked():
    with pytest.raises(StoreUnreadable) as caught:
        store_target("mysql://u:hunter22@h/db")
    assert "hunter22" not in str(caught.value) and "mysql://u:***@h/db" in str(caught.value)


def test_a_file_path_stays_a_file_path(tmp_path):
    assert store_target(str(tmp_path / "c.sqlite")) == str(tmp_path / "c.sqlite")


@pytest.mark.parametrize("command", [["threads"], ["history", "t1"]])
def test_an_unknown_url_makes_no_folder_and_shows_no_password(
    command, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    assert main([*command, "--checkpoint-db", "mysql://u:hunter22@h/db"]) == 2
    err = capsys.readouterr().err
    assert "hunter22" not in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["threads"], ["history", "t1"]])
def test_a_corrupted_sqlite_store_is_one_line(command, tmp_path, capsys):
    corrupt = tmp_path / "checkpoints.sqlite"
    corrupt.write_bytes(b"this is not an SQLite database at all " * 200)
    assert main([*command, "--checkpoint-db", str(corrupt)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "not a readable checkpoint store" in err


def test_every_contract_comes_back_from_a_checkpoint_as_itself():
    """A contract missing from the serializer's list came back from a saved run as a dict
    (seen: the answers asked back, read as `.answer` when the report was written)."""
    import dataclasses
    import inspect

    from pydantic import BaseModel

    from deep_research import state
    from deep_research.tools.checkpoints import STATE_TYPES, serializer

    contracts = [
        kind
        for kind in vars(state).values()
        if inspect.isclass(kind)
        and (issubclass(kind, BaseModel) or dataclasses.is_dataclass(kind))
        and kind.__module__ == state.__name__
    ]
    assert state.PageLink in contracts and set(contracts) <= set(STATE_TYPES)
    answer = state.Clarified(question="Switching what?", answer="our database")
    link = state.PageLink(url="https://s/a", text="a", in_text=True)  # a dataclass, not a model
    page = state.ReadPage(url="https://s", links=[link])
    quote = state.Quote(source_id=2, text="zstd -19", claim="zstd compresses")  # dataclasses too
    aside = state.SetAsideQuote(source_id=3, text="xz 5.2", reason="superseded", note="old")
    weighed = state.WeighedEvidence(set_aside=[aside])
    saved = [answer, link, page, quote, aside, weighed]
    serde = serializer()
    back = serde.loads_typed(serde.dumps_typed(saved))
    assert back == saved and [type(kind) for kind in back] == [type(kind) for kind in saved]
