"""Secrets masked in printed text: key values, and passwords in any URL."""

from __future__ import annotations

import pytest

from deep_research.tools.secrets import mask_url_passwords, redact


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("postgresql://u:pw@127.0.0.1:1/db", "postgresql://u:***@127.0.0.1:1/db"),
        ("postgres://user:s%40cret@h:5432/db?sslmode=require",
         "postgres://user:***@h:5432/db?sslmode=require"),
        ("redis://:pw@cache", "redis://:***@cache"),
        ("postgresql://h/db?user=u&password=x&sslmode=1",
         "postgresql://h/db?user=u&password=***&sslmode=1"),
        ("failed: 'http://bob:pw99@127.0.0.1:1/v1' refused",
         "failed: 'http://bob:***@127.0.0.1:1/v1' refused"),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),  # a port is no password
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        ("see https://a.b/c?x=y:z@w", "see https://a.b/c?x=y:z@w"),  # past the host: not userinfo
        ("postgresql://u:pw/x@h/db", "postgresql://u:***@h/db"),  # issue 20: a / in the password
        ("postgresql://u:pw@x@h/db", "postgresql://u:***@h/db"),  # an @ in the password
        ("host=h user=u password=s3cret dbname=d", "host=h user=u password=*** dbname=d"),
        ("host=h password = 'two words' port=1", "host=h password = *** port=1"),
        ("PGPASSWORD=s3cret psql", "PGPASSWORD=*** psql"),
    ],
)  # fmt: skip
def test_url_passwords_are_masked(text, masked):
    assert mask_url_passwords(text) == masked


def test_redact_masks_keys_and_url_passwords(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-long-enough-key")
    assert (
        redact("key sk-long-enough-key at postgresql://a:b@h/d")
        == "key *** at postgresql://a:***@h/d"
    )
