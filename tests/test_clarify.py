"""Asking back before research: the planner's judgement (a `Clarification`), the interrupt a
caller answers or skips, resumed from the checkpoint without paying for the judgement twice,
and the answers in the brief the planner, writers and reviewer read."""

from __future__ import annotations

import asyncio

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command
from test_chat_models import BrainModel

from deep_research.graph import build_graph, graph
from deep_research.graph.sync_bridge import node
from deep_research.nodes import prompts
from deep_research.nodes.clarifying import clarify_step
from deep_research.settings import Settings
from deep_research.state import Clarified, ResearchInput, ResearchState
from deep_research.tools.checkpoints import open_checkpointer

from fake_chat import Replies
from stand_ins.chat import Brain

SETTINGS = Settings(structured_output="prompt", language="en", model="fake", model_retries=0)
VAGUE = "Is it worth switching?"
REGION = {
    "question": "Switching what: your database, your cloud provider or your phone plan?",
    "suggested_answers": ["database", "cloud provider", "phone plan"],
}
WHEN = {"question": "By when do you need to decide?", "suggested_answers": []}


@pytest.fixture
def replies() -> Replies:
    return Replies()


def asking_step(replies: Replies, *, can_pause: bool = True):
    """The clarify step alone in a graph with a checkpointer, answered by the fake model."""
    builder = StateGraph(ResearchState, input_schema=ResearchInput)
    step = clarify_step(caller_runs_it=True, can_pause=can_pause)
    builder.add_node("clarify", node(step, replies.runs))
    builder.add_edge(START, "clarify")
    return builder.compile(checkpointer=InMemorySaver())


def ask_back(replies: Replies, question: str = VAGUE, **settings) -> tuple[dict, dict, object]:
    """Run the step; its output, the config to resume it with, and its graph."""
    step, config = asking_step(replies), {"configurable": {"thread_id": "t"}}
    state = {"question": question, "settings": SETTINGS.model_copy(update=settings)}
    return asyncio.run(step.ainvoke(state, config)), config, step


# ---------------------------------------------------------------- the judgement (node)


@pytest.mark.parametrize(
    "reply",
    [
        {"needed": False},
        {"needed": False, "questions": []},
        {"needed": False, "questions": [REGION]},  # asked nothing: the model said none needed
        {"needed": True, "questions": []},  # nothing to ask: no re-ask, the question as asked
    ],
    ids=["not-needed", "not-needed-empty", "not-needed-with-questions", "needed-none-given"],
)
def test_a_clear_question_is_researched_as_asked(replies, reply):
    replies.append(reply)
    out, _, _ = ask_back(replies, "Compare zstd and xz compression ratios on nginx access logs")
    assert "__interrupt__" not in out
    assert out["clarifications"] == [] and out["usage"].llm_calls == 1


def test_a_vague_question_is_asked_back_with_suggested_answers(replies):
    replies.append({"needed": True, "questions": [REGION, WHEN]})
    out, _, _ = ask_back(replies)
    asked = out["__interrupt__"][0].value
    assert asked == {"kind": "clarify", "question": VAGUE, "questions": [REGION, WHEN]}
    sent = replies.sent[0]
    assert "Question: Is it worth switching?" in sent[-1].text
    assert "at most 3 short questions" in sent[0].text  # the contract's bound, in the prompt


@pytest.mark.parametrize(
    ("questions", "asked"),
    [
        ([REGION, WHEN, {"question": "For whom?"}, {"question": "Why?"}], 3),  # at most three
        ([REGION, {**REGION, "question": REGION["question"].upper()}], 1),  # a repeat dropped
        ([{"question": "  "}, WHEN], 1),  # a blank one dropped
        (
            [{"question": "迁移什么：数据库还是云服务商？", "suggested_answers": ["数据库", "云"]}],
            1,
        ),
    ],
    ids=["four-given", "repeated", "blank", "chinese"],
)
def test_valid_replies_are_kept_within_the_bounds(replies, questions, asked):
    replies.append({"needed": True, "questions": questions})
    out, _, _ = ask_back(replies)
    shown = out["__interrupt__"][0].value["questions"]
    assert len(shown) == asked and all(q["question"].strip() for q in shown)


def test_a_reply_that_breaks_the_contract_is_asked_again_then_left_alone(replies):
    replies += [{"questions": [REGION]}, "no json here"]  # `needed` is what the model must say
    out, _, _ = ask_back(replies, structured_retries=1)
    assert "__interrupt__" not in out and out["clarifications"] == []
    assert len(replies.sent) == 2 and out["usage"].llm_calls == 2


def test_nothing_is_asked_when_off_for_a_follow_up_or_without_a_checkpointer(replies):
    off, _, _ = ask_back(replies, clarify=False)
    assert "__interrupt__" not in off and replies.sent == []
    step = asking_step(replies, can_pause=False)
    state = {"question": VAGUE, "settings": SETTINGS}
    config = {"configurable": {"thread_id": "u"}}
    assert "__interrupt__" not in asyncio.run(step.ainvoke(state, config))
    follow_up = {**state, "prior_results": []}
    follow_up["prior_results"] = [{"subtask_id": 1, "description": "x", "status": "ok"}]
    assert "__interrupt__" not in asyncio.run(
        step.ainvoke(follow_up, {"configurable": {"thread_id": "v"}})
    )
    assert replies.sent == []


# ---------------------------------------------------------------- the answer (interrupt)


def test_the_answers_become_the_brief_and_the_judgement_is_not_paid_twice(replies):
    replies.append({"needed": True, "questions": [REGION, WHEN]})
    _, config, step = ask_back(replies)
    reply = {"answers": ["database\x07, PostgreSQL 12 to 16", ""]}
    out = asyncio.run(step.ainvoke(Command(resume=reply), config))
    assert out["clarifications"] == [
        Clarified(question=REGION["question"], answer="database, PostgreSQL 12 to 16"),
        Clarified(question=WHEN["question"], answer=""),
    ]
    assert len(replies.sent) == 1 and out["usage"].llm_calls == 1  # answered from the checkpoint
    brief = prompts.brief(VAGUE, out["clarifications"])
    assert brief.startswith(VAGUE) and "- Switching what" in brief and "By when" not in brief


def test_skipping_leaves_the_question_as_asked(replies):
    replies.append({"needed": True, "questions": [REGION]})
    _, config, step = ask_back(replies)
    out = asyncio.run(step.ainvoke(Command(resume={"action": "skip"}), config))
    assert [c.answer for c in out["clarifications"]] == [""]
    assert prompts.brief(VAGUE, out["clarifications"]) == VAGUE


def test_a_malformed_reply_is_refused_and_the_question_still_waits(replies):
    replies.append({"needed": True, "questions": [REGION]})
    _, config, step = ask_back(replies)
    with pytest.raises(ValueError, match="answers"):
        asyncio.run(step.ainvoke(Command(resume={"answers": "database"}), config))
    out = asyncio.run(step.ainvoke(Command(resume={"answers": ["database"]}), config))
    assert out["clarifications"][0].answer == "database" and len(replies.sent) == 1


# ---------------------------------------------------------------- the whole graph


def corpus(tmp_path) -> dict:
    (tmp_path / "pg.md").write_text(
        "# Is it worth switching to PostgreSQL 16?\n\nSwitching is worth it: PostgreSQL 16 "
        "adds logical replication from standbys.\n"
    )
    return {
        "search_backend": "local",
        "corpus_dir": str(tmp_path),
        "language": "en",
        "model": "in-process",
        "max_iterations": 1,
    }


async def first_then_resumed(tmp_path, resume_with) -> tuple[dict, dict, BrainModel]:
    """A run paused at its question, then answered from a new graph on the same store (as
    another process would): the paused state and the run's output."""
    brain = Brain(subtasks=1, clarifying=[REGION])
    store = str(tmp_path / "runs.sqlite")
    config = {"configurable": {"thread_id": "vague"}}
    async with open_checkpointer(store) as saver:
        first = build_graph(checkpointer=saver, chat_model=BrainModel(brain=brain))
        paused = await first.ainvoke({"question": VAGUE, "settings": corpus(tmp_path)}, config)
        assert (await first.aget_state(config)).next == ("clarify",)
        assert dict(brain.calls) == {"Clarification": 1}  # no plan paid for before the answer
    model = BrainModel(brain=brain)
    async with open_checkpointer(store) as saver:
        again = build_graph(checkpointer=saver, chat_model=model)
        output = await again.ainvoke(Command(resume=resume_with), config)
    return paused, output, model


def test_a_run_waits_at_its_question_and_resumes_with_the_answers(tmp_path):
    paused, output, model = asyncio.run(
        first_then_resumed(tmp_path, {"answers": ["database: PostgreSQL"]})
    )
    assert paused["__interrupt__"][0].value["questions"] == [REGION]
    assert model.brain.calls["Clarification"] == 1 and model.brain.calls["TaskPlan"] == 1
    assert output["stop_reason"] == "max_iterations" and output["report"].startswith("# ")
    assert output["clarifications"] == [
        Clarified(question=REGION["question"], answer="database: PostgreSQL")
    ]
    assert output["usage"].by_role["planner"].llm_calls == 2  # the judgement and the plan


def test_the_planner_writer_and_reviewer_read_the_answers(tmp_path, monkeypatch):
    seen: dict[str, list[str]] = {}
    original = BrainModel._generate

    def recording(self, messages, *args, **kwargs):
        system = "\n".join(m.text for m in messages if m.type == "system")
        contract = next(
            (line.split(": ", 1)[1] for line in system.splitlines() if "Schema name: " in line),
            "prose",
        )
        seen.setdefault(contract, []).append("\n".join(m.text for m in messages))
        return original(self, messages, *args, **kwargs)

    monkeypatch.setattr(BrainModel, "_generate", recording)
    asyncio.run(first_then_resumed(tmp_path, {"answers": ["database: PostgreSQL"]}))
    for contract in ("TaskPlan", "ReportOutline", "QualityAssessment"):
        assert any(
            "- Switching what" in text and "database: PostgreSQL" in text for text in seen[contract]
        )
    assert any("database: PostgreSQL" in text for text in seen["prose"])  # the sections


def test_the_graph_without_a_checkpointer_never_asks(tmp_path):
    brain = Brain(subtasks=1, clarifying=[REGION])
    plain = build_graph(chat_model=BrainModel(brain=brain))
    output = asyncio.run(plain.ainvoke({"question": VAGUE}, context=corpus(tmp_path)))
    assert output["stop_reason"] == "max_iterations" and "Clarification" not in brain.calls
    assert graph.get_graph().nodes.keys() >= {"clarify", "decompose"}
