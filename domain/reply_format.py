"""What the structured-output layer says to a model: the schema in the prompt, and the re-ask.

These are the article's two layers of portable structured output: the contract's JSON schema
written into the system prompt (for servers without a native method), and, when a reply breaks
the contract, the failure appended to the conversation with the question asked again.
"""

from __future__ import annotations

import json

from pydantic import BaseModel


def reply_format(contract: type[BaseModel], tagged: bool = True) -> str:
    """The first layer of tool calling: the schema written into the prompt.

    Every field the schema lists as required must be present; numbers respect the minimum and
    maximum the schema gives (scores are 0-100). `tagged`: inside <tool_call> tags (the
    prompt method); JSON mode gets the bare object.
    """
    schema = json.dumps(contract.model_json_schema(), ensure_ascii=False)
    wrapping = " inside <tool_call></tool_call> tags," if tagged else ""
    return (
        f"Reply with one JSON object that matches the JSON schema named {contract.__name__} "
        f"below,{wrapping} and nothing else. Give every required field a real value (an "
        "empty answer is not accepted), and keep every number within the minimum and maximum "
        f"the schema states.\n"
        f"Schema name: {contract.__name__}\n<schema>\n{schema}\n</schema>"
    )


def shorter_reply(max_tokens: int) -> str:
    """The re-ask after a reply that ran past its bound (a server that ignores `max_tokens`)."""
    return (
        f"Your previous reply ran past the limit of {max_tokens} tokens and was stopped unread. "
        f"Answer again within {max_tokens} tokens: only the JSON object, short strings, "
        "no more list items than the task needs."
    )


def fix_reply(error: str) -> str:
    """The second layer: the failure appended to the conversation, and the question asked again."""
    return (
        f"Your previous reply could not be used: {error}\n"
        "Answer again with only the corrected JSON object, every required field filled in."
    )
