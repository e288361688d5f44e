"""A model name checked against the list the server gives (`GET /v1/models`), before any call.

A wrong name otherwise costs the planner call and ends in a 404 `model_not_found`. The list's
shape, as the servers write it (read in their source):

- OpenAI, vLLM, Ollama: `{"object": "list", "data": [{"id": ...}, ...]}` (vLLM adds
  `max_model_len`, `root`, `parent`; Ollama's ids carry their tag, `qwen2.5:latest`, and it
  serves `qwen2.5` as that);
- llama.cpp's `llama-server`: the same `data` (one entry, `owned_by: "llamacpp"`) beside an
  Ollama-style `models` list; it serves its one model whatever name is asked, so a name it does
  not list is no mistake there. In router mode (entries with a `status`) it routes by name;
- llama-cpp-python: `owned_by: "me"`; an unknown name gets its default model.

A server that does not list (404, 501, an error page, not JSON, no answer) tells nothing: the
run goes on, and a wrong name shows up at the first call as before.
"""

from __future__ import annotations

import difflib
import fnmatch
import json

import httpx2

from deep_research.service.bad_input import BadInput
from deep_research.settings import ROLES, Settings
from deep_research.tools.model_names import openai_api_key, openai_base_url, provider_of
from deep_research.tools.process_wide import current
from deep_research.tools.secrets import redact

OPENAI_API = "https://api.openai.com/v1"  # where the SDK goes when no base URL is set
LIST_TIMEOUT = 5.0  # seconds; a server slow to list tells nothing, the run goes on
MAX_LISTED_BYTES = 2_000_000  # a model list is a few kB; a larger answer is not read
ANY_NAME_OWNERS = ("me",)  # llama-cpp-python: an unknown name gets the default model


def listed_ids(body: object) -> list[str] | None:
    """The model ids a `/v1/models` answer lists; None when it is not such a list."""
    entries = body.get("data") if isinstance(body, dict) else None
    if not isinstance(entries, list):
        return None
    ids = [e["id"] for e in entries if isinstance(e, dict) and isinstance(e.get("id"), str)]
    return ids or None


def serves_any_name(body: dict) -> bool:
    """True for servers that answer every model name with the model they have loaded:
    llama.cpp's single-model server and llama-cpp-python."""
    entries = [e for e in body["data"] if isinstance(e, dict)]
    owners = {e.get("owned_by") for e in entries}
    if owners and owners <= set(ANY_NAME_OWNERS):
        return True
    single_llama_cpp = len(entries) == 1 and owners == {"llamacpp"}
    return single_llama_cpp and "status" not in entries[0]  # router mode lists a status


def is_listed(name: str, ids: list[str]) -> bool:
    """True when the server lists the name (Ollama's `name` is `name:latest`; a proxy's
    wildcard route such as LiteLLM's `openai/*` lists every name it matches)."""
    if name in ids or (":" not in name and f"{name}:latest" in ids):
        return True
    return any(fnmatch.fnmatchcase(name, i) for i in ids if "*" in i)


def name_problem(name: str, body: object) -> str | None:
    """Why the server will refuse `name`, judged from its `/v1/models` answer; None when it
    lists the name, serves any name, or gave no list to judge by."""
    ids = listed_ids(body)
    if ids is None or is_listed(name, ids) or serves_any_name(body):  # type: ignore[arg-type]
        return None
    close = difflib.get_close_matches(name, ids, n=3, cutoff=0.6)
    if close:
        offer = "did you mean " + " or ".join(repr(c) for c in close) + "?"
    else:
        shown = ", ".join(repr(i) for i in sorted(ids)[:8])
        offer = f"it lists {len(ids)}: {shown}{' ...' if len(ids) > 8 else ''}"
    return f"the model server has no model {name!r}; {offer}"


def says_model_not_found(error: str) -> bool:
    """True for an error line (`Type: message`) in which the server said it has no such model:
    the same command would get the same 404, so the advice must name another model."""
    kind, _, message = error.partition(": ")
    return kind.endswith("ModelNotFoundError") and "model" in message.lower()


def fetch_model_list(base_url: str, api_key: str, timeout: float = LIST_TIMEOUT) -> object:
    """The server's `GET {base_url}/models` answer as JSON; None when it does not list models
    (any status but 200, not JSON, too large, or no answer in time)."""
    headers = {"Authorization": f"Bearer {api_key}"}
    try:
        url = f"{base_url.rstrip('/')}/models"
        with (
            httpx2.Client(
                timeout=timeout, headers=headers, verify=current().search_clients.tls()
            ) as client,  # as chat calls go: same proxies, same CAs
            client.stream("GET", url) as response,
        ):
            if response.status_code != 200:
                return None
            data = b""
            for chunk in response.iter_bytes():
                data += chunk
                if len(data) > MAX_LISTED_BYTES:
                    return None
        return json.loads(data)
    except (httpx2.HTTPError, ValueError):
        return None


def openai_endpoint_names(settings: Settings) -> list[str]:
    """The model names (one per name, sorted) that the roles send to the OpenAI endpoint."""
    names = {settings.model_for(role) for role in ROLES}
    plain = {n.removeprefix("openai:") for n in names if provider_of(n) in (None, "openai")}
    return sorted(plain)


class ModelList:
    """The server's model list, asked for once (when first needed) and judged per settings."""

    def __init__(self) -> None:
        self._body: dict[str, object] = {}

    def check(self, settings: Settings) -> None:
        """Every model name the OpenAI-compatible server gets is one it lists, when it lists
        any; else BadInput naming the name and the close ones it offers."""
        names = openai_endpoint_names(settings)
        if not names:
            return
        base_url = openai_base_url() or OPENAI_API
        if base_url not in self._body:
            self._body[base_url] = fetch_model_list(base_url, openai_api_key())
        for name in names:
            problem = name_problem(name, self._body[base_url])
            if problem:
                raise BadInput(redact(f"{problem} (model server: {base_url})"))


def check_model_names(settings: Settings) -> None:
    """`ModelList().check(settings)`: for a command that runs one set of settings."""
    ModelList().check(settings)
