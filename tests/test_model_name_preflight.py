"""A wrong model name is found before any paid call, and a run saved with one can be resumed
with another (issue 28, item 2).

The model lists are shaped as the real servers write them (read in their source: OpenAI's API,
vLLM's `ModelList`, Ollama's `openai.ToListCompletion`, llama.cpp's `llama-server` in single-model
and router mode, llama-cpp-python's `get_models`); the commands run in process (`cli.main.main`)
against the stand-in servers on 127.0.0.1.
"""

from __future__ import annotations

import pytest

from deep_research.cli.main import main
from deep_research.service.model_list import name_problem

from stand_ins.loopback import Reply

QUESTION = "Compare zstd and xz"
ONE_ROUND = ["--max-iterations", "1", "--min-iterations", "1"]

OPENAI = {
    "object": "list",
    "data": [
        {"id": m, "object": "model", "created": 1744318173, "owned_by": "system"}
        for m in ("gpt-4.1", "gpt-4.1-mini", "gpt-4o-mini", "text-embedding-3-small")
    ],
}
VLLM = {
    "object": "list",
    "data": [
        {
            "id": "Qwen/Qwen2.5-7B-Instruct",
            "object": "model",
            "created": 1764547200,
            "owned_by": "vllm",
            "root": "Qwen/Qwen2.5-7B-Instruct",
            "parent": None,
            "max_model_len": 32768,
            "permission": [{"id": "modelperm-1", "object": "model_permission"}],
        }
    ],
}
OLLAMA = {
    "object": "list",
    "data": [
        {"id": "qwen2.5:7b", "object": "model", "created": 1764547200, "owned_by": "library"},
        {"id": "llama3.2:latest", "object": "model", "created": 1764547200, "owned_by": "library"},
    ],
}
LLAMA_CPP = {  # llama-server with one model: it answers any name with it
    "models": [{"name": "gemma-3-270m", "model": "gemma-3-270m", "type": "model", "tags": [""]}],
    "object": "list",
    "data": [
        {
            "id": "gemma-3-270m",
            "object": "model",
            "created": 1764547200,
            "owned_by": "llamacpp",
            "meta": {"vocab_type": 2, "n_vocab": 262144, "n_ctx_train": 32768},
        }
    ],
}
LLAMA_CPP_ROUTER = {  # llama-server in router mode: it routes by name, refuses an unknown one
    "object": "list",
    "data": [
        {
            "id": name,
            "object": "model",
            "owned_by": "llamacpp",
            "created": 1764547200,
            "in_cache": True,
            "path": f"/models/{name}.gguf",
            "status": {"value": "loaded"},
        }
        for name in ("gemma-3-270m", "qwen2.5-0.5b")
    ],
}
LLAMA_CPP_PYTHON = {
    "object": "list",
    "data": [{"id": "gemma-3-270m", "object": "model", "owned_by": "me", "permissions": []}],
}


def run(*args: str) -> int:
    """`deep-research run` for one quick round."""
    return main(["run", QUESTION, "--max-iterations", "1", "--min-iterations", "1", *args])


def refuse_other_models(chat_server, known: str) -> None:
    """The chat stand-in answers only `known`, as OpenAI and vLLM do (404 model_not_found)."""

    def fault(number: int, body: dict) -> Reply | None:
        if body.get("model") == known:
            return None
        message = f"The model `{body.get('model')}` does not exist or you do not have access to it."
        return Reply(404, {"error": {"message": message, "code": "model_not_found"}})

    chat_server.fault = fault


@pytest.mark.parametrize(
    ("listing", "wrong", "offered"),
    [
        (OPENAI, "gpt-4.1-mni", "did you mean 'gpt-4.1-mini'"),
        (VLLM, "Qwen/Qwen2.5-7B-Instrct", "did you mean 'Qwen/Qwen2.5-7B-Instruct'"),
        (OLLAMA, "qwen2.5:7", "did you mean 'qwen2.5:7b'"),
        (LLAMA_CPP_ROUTER, "gemma-3-27m", "did you mean 'gemma-3-270m'"),
        (OPENAI, "claude-sonnet", "it lists 4: 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4o-mini'"),
    ],
    ids=["openai", "vllm", "ollama", "llama.cpp-router", "nothing-close"],
)
def test_a_model_the_server_does_not_list_is_refused_before_any_call(
    listing, wrong, offered, chat_server, search_server, home, capsys
):
    chat_server.info_paths["/v1/models"] = listing
    assert run("--model", wrong, "--output", "r.md") == 2
    err = capsys.readouterr().err
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"error: the model server has no model {wrong!r}; {offered}"), err
    assert f"(model server: {chat_server.url}/v1)" in line and "Traceback" not in err
    assert "thread:" not in err  # no run was started, so there is nothing to resume
    assert chat_server.chat_requests == [] and search_server.searches == []
    assert not (home / "r.md").exists()


@pytest.mark.parametrize(
    ("listing", "name"),
    [
        (OPENAI, "gpt-4.1-mini"),
        (VLLM, "Qwen/Qwen2.5-7B-Instruct"),
        (OLLAMA, "llama3.2"),  # Ollama serves `llama3.2` as `llama3.2:latest`
        (LLAMA_CPP, "stand-in-model"),  # llama-server answers any name with its one model
        (LLAMA_CPP_PYTHON, "stand-in-model"),  # so does llama-cpp-python
        (Reply(404, {"detail": "Not Found"}), "stand-in-model"),  # lists nothing: goes on
        (Reply(501, {"error": "not implemented"}), "stand-in-model"),
        (Reply(200, raw=b"<html>a proxy's page</html>"), "stand-in-model"),
    ],
    ids=["openai", "vllm", "ollama", "llama.cpp", "llama-cpp-python", "404", "501", "html"],
)
def test_a_listed_name_or_a_server_that_tells_nothing_goes_on(
    listing, name, chat_server, search_server, home, capsys
):
    if isinstance(listing, Reply):
        served = chat_server.handle
        chat_server.handle = lambda path, body, headers: (
            listing if path == "/v1/models" else served(path, body, headers)
        )
    else:
        chat_server.info_paths["/v1/models"] = listing
    assert run("--model", name, "--quiet", "--output", "r.md") == 0, capsys.readouterr().err
    assert {r["body"]["model"] for r in chat_server.chat_requests} == {name}
    assert (home / "r.md").read_text(encoding="utf-8")


def test_the_rule_on_valid_lists_first():
    """The check refuses only what it must: every listed name passes, in every shape."""
    for listing in (OPENAI, VLLM, OLLAMA, LLAMA_CPP, LLAMA_CPP_ROUTER, LLAMA_CPP_PYTHON):
        for entry in listing["data"]:
            assert name_problem(entry["id"], listing) is None
    assert name_problem("anything", {"object": "list", "data": []}) is None  # nothing to judge
    routes = {"object": "list", "data": [{"id": "openai/*"}, {"id": "claude-3"}]}  # a proxy
    assert name_problem("openai/gpt-4.1-mini", routes) is None
    assert name_problem("claude-3.5", routes) is not None
    assert name_problem("anything", {"error": "unauthorized"}) is None
    assert name_problem("anything", None) is None


def test_a_run_refused_its_model_midway_resumes_with_another(
    chat_server, search_server, home, capsys
):
    """A server that does not list models refuses the name at the first call: the advice names
    `--model`, and `resume --model` finishes the run (the new name is saved with it)."""
    refuse_other_models(chat_server, "stand-in-model")
    assert run("--model", "gpt-4.1-mni", "--thread-id", "t1", "--quiet") == 1
    err = capsys.readouterr().err
    assert "The model `gpt-4.1-mni` does not exist" in err
    assert "resume with a model it has: deep-research resume t1 --model NAME" in err
    answered = len(chat_server.chat_requests)
    assert main(["resume", "t1", "--quiet"]) == 1  # the same name fails the same way
    assert "--model NAME" in capsys.readouterr().err
    chat_server.requests.clear()
    assert main(["resume", "t1", "--model", "stand-in-model", "--output", "r.md", "--quiet"]) == 0
    assert {r["body"]["model"] for r in chat_server.chat_requests} == {"stand-in-model"}
    assert "## Sources" in (home / "r.md").read_text(encoding="utf-8")
    assert answered >= 1


def test_the_new_model_is_saved_with_the_run(chat_server, search_server, home, capsys):
    """After `resume --model`, a later plain `resume` keeps the new name."""
    refuse_other_models(chat_server, "stand-in-model")
    assert run("--model", "gpt-4.1-mni", "--thread-id", "t2", "--quiet") == 1
    capsys.readouterr()

    def fail_the_writer(number: int, body: dict) -> Reply | None:
        """The report's prose call fails (the workers catch their own failures)."""
        prose = not body.get("response_format") and not body.get("tools")
        if prose and "Schema name:" not in str(body.get("messages")):
            return Reply(401, {"error": {"message": "bad key"}})
        return None

    chat_server.fault = fail_the_writer
    assert main(["resume", "t2", "--model", "stand-in-model", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "resume with: deep-research resume t2" in err and "--model" not in err
    refuse_other_models(chat_server, "stand-in-model")
    chat_server.requests.clear()
    assert main(["resume", "t2", "--quiet"]) == 0
    assert {r["body"]["model"] for r in chat_server.chat_requests} == {"stand-in-model"}


def test_a_plain_resume_of_a_run_whose_model_is_not_listed_is_refused_before_a_call(
    chat_server, search_server, home, capsys
):
    refuse_other_models(chat_server, "stand-in-model")
    assert run("--model", "gpt-4.1-mni", "--thread-id", "t3", "--quiet") == 1
    capsys.readouterr()
    chat_server.info_paths["/v1/models"] = OPENAI  # now the server lists what it has
    chat_server.requests.clear()
    assert main(["resume", "t3"]) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "no model 'gpt-4.1-mni'; did you mean 'gpt-4.1-mini' or" in line
    assert line.endswith("resume it with: deep-research resume t3 --model NAME")
    assert chat_server.chat_requests == []
    assert main(["resume", "t3", "--model", "gpt-4.1-mni"]) == 2  # refused the same way
    assert chat_server.chat_requests == []


def test_resume_changes_only_model_and_endpoint_settings(chat_server, search_server, home, capsys):
    assert run("--thread-id", "t4", "--quiet") == 0
    capsys.readouterr()
    assert main(["resume", "t4", "--set", "max_iterations=3"]) == 2
    line = capsys.readouterr().err.strip()
    assert line.startswith("error: --set max_iterations: a resumed run keeps what it researches")
    assert "model, planner_model" in line


def test_batch_names_the_line_whose_model_is_not_listed(chat_server, search_server, home, capsys):
    chat_server.info_paths["/v1/models"] = OPENAI
    lines = [QUESTION, '{"question": "History of xz", "settings": {"model": "gpt-4.1-mni"}}']
    (home / "questions.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["batch", "questions.txt", "--model", "gpt-4.1-mini", "--out-dir", "out"]) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith("error: line 2: the model server has no model 'gpt-4.1-mni'; did you")
    assert chat_server.chat_requests == []
    assert [r["path"] for r in chat_server.requests] == ["/v1/models"]  # asked once, not per line


def test_eval_refuses_a_model_the_server_does_not_list(
    chat_server, search_server, judge_server, home, capsys
):
    chat_server.info_paths["/v1/models"] = OPENAI
    (home / "tasks.jsonl").write_text(f'{{"id": 1, "prompt": "{QUESTION}"}}\n', encoding="utf-8")
    judge = ["--judge-model", "judge-model", "--judge-base-url", f"{judge_server.url}/v1"]
    argv = ["eval", "tasks.jsonl", "--out-dir", "out", "--model", "gpt-4.1-mni", *judge]
    assert main(argv) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith("error: the model server has no model 'gpt-4.1-mni'; did you mean")
    assert chat_server.chat_requests == [] and judge_server.requests == []


def test_a_batch_question_refused_its_model_runs_again_with_another(
    chat_server, search_server, home, capsys
):
    """A server that does not list models refuses the name at the first call: the note says to
    name another, and the same command with `--model` finishes the question (the new name is
    saved with its run), as `resume --model` does."""
    refuse_other_models(chat_server, "stand-in-model")
    (home / "questions.txt").write_text(f"{QUESTION}\n", encoding="utf-8")
    batch = ["batch", "questions.txt", "--out-dir", "out", *ONE_ROUND]
    assert main([*batch, "--model", "gpt-4.1-mni"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "the model server has no such model: name one it has (--model" in err
    chat_server.requests.clear()
    assert main([*batch, "--model", "stand-in-model"]) == 0
    assert {r["body"]["model"] for r in chat_server.chat_requests} == {"stand-in-model"}
    summary = (home / "out" / "summary.jsonl").read_text(encoding="utf-8")
    assert '"status": "done"' in summary


def test_an_eval_refused_its_model_midway_says_to_start_again_with_another(
    chat_server, search_server, judge_server, home, capsys
):
    """An eval folder keeps the model it was started with, so the advice is not "run the same
    command again" (refused the same way) but another model in another folder."""
    refuse_other_models(chat_server, "stand-in-model")
    (home / "tasks.jsonl").write_text(f'{{"id": 1, "prompt": "{QUESTION}"}}\n', encoding="utf-8")
    judge = ["--judge-model", "judge-model", "--judge-base-url", f"{judge_server.url}/v1"]
    argv = ["eval", "tasks.jsonl", "--out-dir", "out", "--model", "gpt-4.1-mni", *judge, *ONE_ROUND]
    assert main(argv) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert (
        "error: 1 tasks failed; the model server has no such model: start again with one it " in err
    )
    assert "in another --out-dir" in err and "run the same command again" not in err
