"""What one run has spent: the single ledger its budget checks read, exact across resumes.

The checkpointed `usage` in state is the ledger's durable form. At every orchestrator step no
call of the run is in flight, so the ledger is set to the checkpointed total (`settle`); inside a
fan-out each answered call is added as it comes back (`record`), so that sibling workers see
each other's spending at once. A worker resumed in a new process brings the spending of its own
checkpointed steps (`join`), and a caller that resumes a run may add what finished siblings
wrote before the crash (`LiveRuns.open(..., spent=...)`); so the budget holds for a fresh run, a
resumed one, and one of a hundred.
"""

from __future__ import annotations

from collections.abc import Hashable

from deep_research.domain.budgets import model_budget_spent, run_budget_spent
from deep_research.settings import Settings
from deep_research.state import Usage


class RunLedger:
    """The run's spending so far, plus the searches sent and not yet answered (a page fetch is
    booked when it starts, so none is ever in flight unbooked)."""

    def __init__(self, spent: Usage | None = None) -> None:
        self.spent = spent or Usage()
        self.searches_in_flight = 0
        self._joined: set[Hashable] = set()

    def settle(self, checkpointed: Usage) -> None:
        """Take the checkpointed total at an orchestrator step, when nothing else is in flight."""
        self.spent = checkpointed
        self._joined.clear()

    def join(self, worker: Hashable, own_spending: Usage) -> None:
        """Count a worker's checkpointed spending once, when this process first runs one of its
        steps (zero for a new worker; what its finished steps cost for a resumed one)."""
        if worker not in self._joined:
            self._joined.add(worker)
            self.spent = self.spent + own_spending

    def record(self, usage: Usage) -> None:
        """Count an answered call (or a search) the moment it comes back."""
        self.spent = self.spent + usage

    def searches_left(self, settings: Settings) -> int | None:
        """Searches the run may still send, in-flight ones counted; None without a budget."""
        if settings.max_search_calls is None:
            return None
        sent = self.spent.search_calls + self.searches_in_flight
        return max(0, settings.max_search_calls - sent)

    def tokens_left(self, settings: Settings) -> int | None:
        """Tokens the run may still spend; None without a budget."""
        if settings.max_total_tokens is None:
            return None
        return max(0, settings.max_total_tokens - self.spent.total_tokens)

    def pages_left(self, settings: Settings) -> int:
        """Whole pages the run may still fetch (fetches are counted when they start)."""
        return max(0, settings.max_page_fetches - self.spent.page_fetches)

    def take_page(self, settings: Settings) -> bool:
        """Book one page fetch if the run's page budget allows it (no await between the check
        and the booking, so parallel workers can never fetch one page more than the budget)."""
        if not self.pages_left(settings):
            return False
        self.spent = self.spent + Usage(page_fetches=1)
        return True

    def budget_spent(self, settings: Settings) -> bool:
        """True once the run's token, search or dollar budget is spent, in-flight searches
        included (so that parallel workers cannot all send the last allowed search)."""
        searches = self.spent.search_calls + self.searches_in_flight
        pending = self.spent.model_copy(update={"search_calls": searches})
        return run_budget_spent(pending, settings)

    def model_budget_spent(self, settings: Settings) -> bool:
        """True once the run's token or dollar budget is spent: no model call past it."""
        return model_budget_spent(self.spent, settings)
