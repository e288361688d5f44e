"""One in-process fake chat model for node tests: it answers from a list, records what it was
sent, and reaches a node through the live runs a test hands it (no HTTP, no graph)."""

from __future__ import annotations

import json

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGeneration, ChatResult

from deep_research.tools.run_resources import LiveRuns


class Replies(list):
    """The model's replies, in order (JSON objects for contracts, text for prose), the
    conversations it was sent, and the live runs that hand it to every role."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[list] = []
        answers = self

        class Recording(GenericFakeChatModel):
            async def astream(self, messages, *args, **kwargs):
                """The next reply, taken when the call is made: calls in flight at once (the
                sections of a report) each get their own."""
                answers.sent.append(messages)
                yield AIMessageChunk(content=answers.next_message().content)

            def _generate(self, messages, *args, **kwargs):
                """Asked without streaming only after an empty stream, to learn why: the same
                empty answer (no reply of the list is spent on it)."""
                return ChatResult(generations=[ChatGeneration(message=AIMessage(""))])

        self.model = Recording(messages=iter([]))
        self.runs = LiveRuns(lambda settings, role: self.model)

    def next_message(self) -> AIMessage:
        answer = self.pop(0)
        text = answer if isinstance(answer, str) else json.dumps(answer)
        return AIMessage(f"<tool_call>{text}</tool_call>" if text.startswith("{") else text)
