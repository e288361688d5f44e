"""A structured reply kept without its non-essential fields when only they are invalid.

A small model's four good findings next to a self-rated confidence of 4 on a 0-1 scale are
worth keeping; the confidence is not, and it is never clamped to 1. A contract names the fields
it can do without in `NON_ESSENTIAL` (each has a default meaning "not given"); a reply whose
every error sits in those fields is kept with them left out, and the caller says so.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ValidationError

Contract = TypeVar("Contract", bound=BaseModel)


def non_essential(contract: type[BaseModel]) -> frozenset[str]:
    """The fields `contract` can do without (its `NON_ESSENTIAL` class variable)."""
    return frozenset(getattr(contract, "NON_ESSENTIAL", ()))


def salvaged(
    contract: type[Contract], value: object, error: ValidationError
) -> tuple[Contract, list[str]] | None:
    """The reply without the non-essential fields that broke it, and their names; None when an
    essential field (or the reply as a whole) is wrong."""
    spare = non_essential(contract)
    failed = {item["loc"][0] if item["loc"] else None for item in error.errors()}
    if not spare or not isinstance(value, dict) or not failed or not failed <= spare:
        return None
    try:
        kept = contract.model_validate({k: v for k, v in value.items() if k not in failed})
    except ValidationError:
        return None
    return kept, sorted(str(name) for name in failed)
