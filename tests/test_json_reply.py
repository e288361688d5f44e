"""Real-world model replies in, JSON values out: fences, tool calls, reasoning, broken JSON."""

import pytest

from deep_research.domain.json_reply import (
    ReplyNotJSON,
    extract_json,
    strip_reasoning,
    unwrap_single_key,
)

PLAN = {"query_type": "breadth_first", "subtasks": [{"id": 1, "description": "x"}]}

REPLIES = {
    "plain object": ('{"score": 82, "issues": []}', {"score": 82, "issues": []}),
    "json fence with prose around": (
        'Here is the plan:\n```json\n{"a": 1, "b": "two"}\n```\nLet me know if it helps.',
        {"a": 1, "b": "two"},
    ),
    "plain fence": ('```\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
    "first fence is not JSON": (
        'Run:\n```bash\npip install x\n```\nResult:\n```json\n{"ok": true}\n```',
        {"ok": True},
    ),
    "python fence loses to a later json fence": (
        '```python\nd = {"wrong": 1}\n```\n```json\n{"right": 2}\n```',
        {"right": 2},
    ),
    "unclosed fence": ('```json\n{"a": 1, "b": [1, 2', {"a": 1, "b": [1, 2]}),
    "tool call": (
        '<tool_call>\n{"name": "TaskPlan", "arguments": '
        '{"query_type": "breadth_first", "subtasks": [{"id": 1, "description": "x"}]}}\n'
        "</tool_call>",
        PLAN,
    ),
    "tool call with arguments as a JSON string": (
        '<tool_call>{"name": "GapCheck", "arguments": "{\\"gaps\\": [\\"a\\"], '
        '\\"next_queries\\": []}"}</tool_call>',
        {"gaps": ["a"], "next_queries": []},
    ),
    "unclosed tool call": (
        '<tool_call>\n{"name": "GapCheck", "args": {"gaps": ["x"]}}',
        {"gaps": ["x"]},
    ),
    "tool-call envelope without tags, parameters key": (
        '{"name": "QualityAssessment", "parameters": {"score": 70}}',
        {"score": 70},
    ),
    "think block with braces before the JSON": (
        '<think>\nThe schema wants {"score": ...}, maybe {a: 1}?\n</think>\n{"score": 90}',
        {"score": 90},
    ),
    "closing think without opening tag": (
        'Okay, the user wants a plan. Let me write {"draft": 1}.\n</think>\n\n{"final": 2}',
        {"final": 2},
    ),
    "nested think tags": (
        '<think>a <think>b {"x": 1}</think> c</think>\n<THINKING>d</THINKING>{"y": 2}',
        {"y": 2},
    ),
    "unclosed think before the JSON": ('<think>\nLet me see {x}.\n{"a": 1}', {"a": 1}),
    "trailing commas": ('{"a": [1, 2,], "b": 3,}', {"a": [1, 2], "b": 3}),
    "single quotes": ("{'gaps': ['one', 'two']}", {"gaps": ["one", "two"]}),
    "Python literals": (
        "{'another_round_worthwhile': True, 'note': None, 'ok': False}",
        {"another_round_worthwhile": True, "note": None, "ok": False},
    ),
    "comments and unquoted keys": (
        '{\n  // the overall score\n  score: 75, /* out of 100 */\n  "issues": ["thin"]\n}',
        {"score": 75, "issues": ["thin"]},
    ),
    "truncated object": ('{"a": 1, "b": [1, 2', {"a": 1, "b": [1, 2]}),
    "truncated nested object keeps the outer one": (
        'Sure: {"plan": {"a": 1}, "subtasks": [{"id": 1, "description": "cut',
        {"plan": {"a": 1}, "subtasks": [{"id": 1, "description": "cut"}]},
    ),
    "Chinese values and prose": (
        '好的，这是结果：\n{"summary": "量子计算的进展", "gaps": ["成本"]}\n希望有帮助。',
        {"summary": "量子计算的进展", "gaps": ["成本"]},
    ),
    "top-level array": (
        'Queries:\n[{"q": "a"}, {"q": "b"}]\nDone.',
        [{"q": "a"}, {"q": "b"}],
    ),
    "array of strings": (
        '["solar cost 2024", "wind capacity"]',
        ["solar cost 2024", "wind capacity"],
    ),
    "unicode escapes": (
        '{"city": "M\\u00fcnchen", "sym": "\\u2713"}',
        {"city": "München", "sym": "✓"},
    ),
    "citation marks before the JSON": (
        "Per [1] and [the docs](http://x.org), here it is: {'score': 60,}",
        {"score": 60},
    ),
    "placeholder braces before the JSON": ('Fill {name} in.\n{"name": "x"}', {"name": "x"}),
    "empty object": ("{}", {}),
    "empty object in a fence": ("```json\n{}\n```", {}),
    "one-line fence": ('```json {"a": 1}```', {"a": 1}),
    "reasoning tag variants": (
        "<reasoning>r</reasoning><reflection>{no}</reflection>[1, 2]\n"
        '<thinking>t</thinking>{"z": [1]}',
        {"z": [1]},
    ),
}


@pytest.mark.parametrize(("reply", "expected"), REPLIES.values(), ids=REPLIES.keys())
def test_extract_json(reply: str, expected: object) -> None:
    assert extract_json(reply) == expected


NOT_JSON = {
    "only prose": ("I could not find anything useful on this topic.", "no JSON object"),
    "empty": ("", "empty"),
    "whitespace only": ("  \n\t ", "empty"),
    "only reasoning": ("<think>hmm {x}</think>\n", "only reasoning"),
    "unclosed think to the end": ("<think>\nthinking about {braces}", "only reasoning"),
    "citation marks only": ("See [1] and [2, 3] for details.", "no JSON object"),
    "a lone brace": ("Here you go: {", "cut off beyond repair"),
    "braces that are not JSON": ("Use {placeholder} syntax.", "cut off beyond repair"),
    "nesting too deep to parse": ("[" * 3000 + "]" * 3000, "nested too deeply"),
    "tool call with unusable arguments": (
        '<tool_call>{"name": "T", "arguments": "not json"}</tool_call>',
        "arguments are not a JSON object",
    ),
}


@pytest.mark.parametrize(("reply", "cause"), NOT_JSON.values(), ids=NOT_JSON.keys())
def test_extract_json_fails(reply: str, cause: str) -> None:
    with pytest.raises(ReplyNotJSON, match=cause):
        extract_json(reply)


def test_reply_not_json_message_is_short_for_a_long_reply() -> None:
    with pytest.raises(ReplyNotJSON) as caught:
        extract_json("blah " * 2000)
    assert len(str(caught.value)) < 200
    assert isinstance(caught.value, ValueError)


def test_strip_reasoning_removes_blocks_and_keeps_prose() -> None:
    text = "<think>plan\nit</think>Intro.\n<Reflection>check</Reflection>\nBody [1].\n"
    assert strip_reasoning(text) == "Intro.\n\nBody [1]."


def test_strip_reasoning_drops_everything_before_an_orphan_closing_tag() -> None:
    assert (
        strip_reasoning("reasoning without a start\n</think>\n# Report\nText") == "# Report\nText"
    )


def test_strip_reasoning_unclosed_block_stops_at_json_line() -> None:
    assert strip_reasoning("<think>\nstill {thinking}\n```json\n{}\n```") == "```json\n{}\n```"
    assert strip_reasoning("<think>\nstill\n<tool_call>{}") == "<tool_call>{}"
    assert strip_reasoning("<think>\nnever closed, no JSON") == ""


def test_strip_reasoning_leaves_plain_prose_alone() -> None:
    assert strip_reasoning("  A report about <b>thinking</b> machines.  ") == (
        "A report about <b>thinking</b> machines."
    )


def test_unwrap_single_key() -> None:
    keys = {"query_type", "subtasks", "recommended_worker_count"}
    assert unwrap_single_key({"TaskPlan": PLAN}, keys) == PLAN
    assert unwrap_single_key({"properties": PLAN}, keys) == PLAN
    reply = '```json\n{"TaskPlan": {"query_type": "depth_first", "subtasks": []}}\n```'
    assert unwrap_single_key(extract_json(reply), keys) == {
        "query_type": "depth_first",
        "subtasks": [],
    }


@pytest.mark.parametrize(
    "value",
    [
        {"subtasks": [{"id": 1}]},  # the key itself is expected
        {"Plan": {"unrelated": 1}},  # the inner dict shares no key with the schema
        {"Plan": [PLAN]},  # the inner value is not a dict
        {"TaskPlan": PLAN, "extra": 1},  # more than one key
        [PLAN],
        "text",
    ],
)
def test_unwrap_single_key_leaves_other_values_alone(value: object) -> None:
    assert unwrap_single_key(value, {"query_type", "subtasks"}) == value
