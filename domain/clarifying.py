"""Asking back before research: the planner's questions made safe to show, and the person's
reply turned into the run's brief. Pure, no I/O.

The questions are the model's text and the answers the person's: both become one bounded line
each (no control characters), since they are shown on a terminal, in a form and in the report's
header, and the answers are read by every later prompt.
"""

from __future__ import annotations

from deep_research.domain.control_chars import without_any_controls
from deep_research.domain.distinct import distinct, first_of_each
from deep_research.state import (
    MAX_CLARIFYING_QUESTIONS,
    Clarification,
    Clarified,
    ClarifyingQuestion,
    ClarifyReply,
)

QUESTION_CHARS = 300  # a question asked back, at most
ANSWER_CHARS = 300  # a person's answer (or a suggested one), at most
SUGGESTIONS = 4  # suggested answers per question, at most


def _line(text: str, limit: int) -> str:
    """Text as one line without control characters, at most `limit` characters."""
    line = " ".join(without_any_controls(text).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def questions_to_ask(judged: Clarification) -> list[ClarifyingQuestion]:
    """The questions worth asking: none unless the planner judged them needed; at most three,
    distinct and non-blank, each with at most four distinct suggested answers."""
    if not judged.needed:
        return []
    asked = first_of_each(judged.questions, lambda q: q.question, limit=MAX_CLARIFYING_QUESTIONS)
    return [
        ClarifyingQuestion(
            question=_line(q.question, QUESTION_CHARS),
            suggested_answers=[
                _line(a, ANSWER_CHARS) for a in distinct(q.suggested_answers, limit=SUGGESTIONS)
            ],
        )
        for q in asked
    ]


def clarified(questions: list[ClarifyingQuestion], reply: ClarifyReply) -> list[Clarified]:
    """Each question with the person's answer to it ("" for one left unanswered, or for all when
    they skipped); answers beyond the questions are ignored."""
    answers = [] if reply.action == "skip" else reply.answers
    return [
        Clarified(
            question=q.question,
            answer=_line(answers[n], ANSWER_CHARS) if n < len(answers) else "",
        )
        for n, q in enumerate(questions)
    ]
