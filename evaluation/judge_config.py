"""The judge's own client settings, light enough for `eval --help` to read their defaults: none
of them comes from the research settings."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from deep_research.settings import ModelPrice, Role, Settings

JUDGE_MODEL_VARIABLE = "DEEP_RESEARCH_JUDGE_MODEL"
JUDGE_ROLE: Role = "reviewer"  # the RACE judge's calls are counted under this role
FACT_ROLE: Role = "researcher"  # a separate FACT judge's, so each model gets its own price


class JudgeConfig(BaseModel):
    """The judge's own client settings; none of them comes from the research settings.

    The defaults suit a thinking judge (the benchmark's Gemini 2.5 Pro thinks for up to 16 k
    tokens before it answers): a reply cap far above a research role's, a large context
    window (lowered to the server's when it tells), a long bound on each question.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1)
    max_tokens: int = Field(32_000, ge=256, le=200_000, description="Reply cap of a judge call.")
    context_tokens: int = Field(
        128_000, ge=1_000, le=2_000_000, description="The judge's context window, in tokens."
    )
    timeout: float = Field(
        1_800, gt=0, le=7_200, description="Seconds one judge question may take, retries included."
    )
    concurrency: int = Field(4, ge=1, le=64, description="Judge calls in flight at once.")
    structured_output: Literal["auto", "json_schema", "json_object", "tool_calling", "prompt"] = (
        "auto"
    )
    retries: int = Field(3, ge=0, le=10, description="Retries of a failed judge call.")
    reasks: int = Field(
        2, ge=0, le=5, description="Re-asks after a reply that breaks its contract."
    )
    prices: dict[str, ModelPrice] = Field(default_factory=dict)
    role: Role = Field(JUDGE_ROLE, description="The role its calls are counted under.")

    def settings(self) -> Settings:
        """What the model layer reads for a judge call: the judge's values, else defaults."""
        return Settings(
            model=self.model,
            **{f"{self.role}_max_tokens": self.max_tokens},
            max_context_tokens=self.context_tokens,
            model_call_timeout=self.timeout,
            request_idle_timeout=min(
                self.timeout, Settings.model_fields["request_idle_timeout"].default
            ),
            max_concurrent_model_calls=self.concurrency,
            structured_output=self.structured_output,
            model_retries=self.retries,
            structured_retries=self.reasks,
            prices=self.prices,
        )
