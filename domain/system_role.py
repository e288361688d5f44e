"""Send system instructions where the model will read them.

Some chat templates have no system role: Gemma's templates fold it away or drop it, and
llama-cpp-python's `--chat_format gemma` drops system messages outright (the planner's
887-character system prompt reached the model as 37 tokens). For such models the
instructions go at the top of the first user message instead.
"""

from __future__ import annotations

import re

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

# Model families whose chat templates lack a system role (matched in the model name).
NO_SYSTEM_ROLE = re.compile(r"gemma|mistral-7b-instruct-v0\.1|falcon", re.I)


def system_in_user(setting: str, model: str) -> bool:
    """True when the system text must travel inside the first user message."""
    if setting == "auto":
        return bool(NO_SYSTEM_ROLE.search(model))
    return setting == "user"


def place_system(messages: list[BaseMessage], setting: str, model: str) -> list[BaseMessage]:
    """The conversation with its system messages moved into the first user message if need be."""
    if not system_in_user(setting, model):
        return messages
    system = "\n\n".join(m.text for m in messages if isinstance(m, SystemMessage))
    rest = [m for m in messages if not isinstance(m, SystemMessage)]
    if not system:
        return rest
    for index, message in enumerate(rest):
        if isinstance(message, HumanMessage):
            merged = HumanMessage(f"Instructions:\n{system}\n\n{message.text}")
            return [*rest[:index], merged, *rest[index + 1 :]]
    return [HumanMessage(f"Instructions:\n{system}"), *rest]
