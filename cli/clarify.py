"""Questions asked back on the terminal before research (the run's `clarify` interrupt).

`run` asks only where someone can answer: on a terminal. Piped, or with `--no-clarify`, the step
is off and nothing is asked (nor paid for); a saved run resumed without a terminal researches
its question as asked. The plan-approval question is answered by `cli.approval`.
"""

from __future__ import annotations

import sys
import textwrap

from deep_research.cli.approval import decide_plan, interruptible
from deep_research.nodes.clarifying import ASKED
from deep_research.settings import Settings


def someone_answers(settings: Settings) -> Settings:
    """The run's settings with `clarify` off when standard input is not a terminal."""
    if settings.clarify and not _is_terminal():
        return settings.model_copy(update={"clarify": False})
    return settings


def answer(request: dict) -> dict:
    """The person's reply to whatever the run waits for: its questions, or its plan."""
    if request.get("kind") == ASKED:
        return answer_questions(request)
    return decide_plan(request)


def answer_questions(request: dict) -> dict:
    """Ask each question on the terminal; a number picks a suggested answer, Enter leaves the
    question open. Nothing answered (or no terminal): skip, the question is researched as
    asked."""
    if not _is_terminal():
        print("no terminal to answer the questions: researching as asked", file=sys.stderr)
        return {"action": "skip"}
    with interruptible():
        answers = _ask(request["questions"])
    return {"answers": answers} if any(answers) else {"action": "skip"}


def _ask(questions: list[dict]) -> list[str]:
    """One answer per question, read from standard input ("" for one left open)."""
    count = "a question" if len(questions) == 1 else f"{len(questions)} questions"
    print(
        f"\nBefore researching, {count} (a number picks an answer; or your own words; "
        "Enter leaves it open):",
        file=sys.stderr,
    )
    answers = []
    for number, question in enumerate(questions, 1):
        suggested = question.get("suggested_answers") or []
        print(
            textwrap.fill(f"{number}. {question['question']}", subsequent_indent="   "),
            file=sys.stderr,
        )
        if suggested:
            choices = "  ".join(f"{n}) {text}" for n, text in enumerate(suggested, 1))
            print(
                textwrap.fill(choices, initial_indent="   ", subsequent_indent="   "),
                file=sys.stderr,
            )
        print("   > ", end="", file=sys.stderr, flush=True)
        line = sys.stdin.readline().strip()
        pick = int(line) - 1 if line.isdigit() else -1
        answers.append(suggested[pick] if 0 <= pick < len(suggested) else line)
    return answers


def _is_terminal() -> bool:
    """Whether a person can answer on standard input."""
    return bool(sys.stdin is not None and sys.stdin.isatty())
