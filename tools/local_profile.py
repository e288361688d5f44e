"""The local-model profile: when it applies, and what it says it did.

A loopback base URL (llama.cpp, Ollama, LM Studio on this machine) almost always means one
slow server with a few slots and a small context: the CLI then turns `local_model` on, whose
values (`settings.LOCAL_PROFILE`) fill only the settings the user did not give.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from deep_research.settings import LOCAL_PROFILE, Settings


def is_loopback(base_url: str | None) -> bool:
    """True when the base URL names this machine (localhost, 127.0.0.0/8, ::1)."""
    if not base_url:
        return False
    host = (urlsplit(base_url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def local_profile_note(settings: Settings, explicit: bool) -> str:
    """One line naming the profile's values as the run will use them."""
    why = "--local-model" if explicit else "loopback OPENAI_BASE_URL"
    shown = ", ".join(f"{name} {getattr(settings, name)}" for name in LOCAL_PROFILE)
    return f"local-model profile ({why}): {shown}"
