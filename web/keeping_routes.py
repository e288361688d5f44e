"""The web app's routes for keeping a finished report true: re-check its sources, watch its
question (or stop), and what the run page shows of them (`web.keeping_page`). Each goes through
the run service (`service.keeping`), as the caller the request names; each POST carries the
page's anti-forgery token (`checked_form`) and answers with a redirect back to the run page, or
that page again with the reason when it was refused.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from deep_research.domain.recheck_rules import parse_every
from deep_research.graph.recheck import NotRecheckable
from deep_research.service import keeping
from deep_research.service.caller import Caller
from deep_research.service.runs import RunInfo, RunService
from deep_research.service.watch import NotWatchable
from deep_research.web.guard import checked_form
from deep_research.web.keeping_page import Kept

CallerOf = Callable[[Request], Caller]
PageOf = Callable[[Request, str, str, int], Awaitable[Response]]  # run page with an error


class KeepingRoutes:
    """Re-check and watch routes over the run service."""

    def __init__(self, service: RunService, caller_of: CallerOf, page_of: PageOf) -> None:
        """`caller_of` names the request's caller; `page_of` renders the run page again with
        an error (the app's run page, so this part stays out of its layout)."""
        self.service, self.caller_of, self.page_of = service, caller_of, page_of

    def routes(self) -> list[Route]:
        """The POST routes (before the app's catch-all `/runs/{id}/{action}`)."""
        return [
            Route("/runs/{thread_id}/recheck", self.recheck, methods=["POST"]),
            Route("/runs/{thread_id}/watch", self.watch, methods=["POST"]),
            Route("/runs/{thread_id}/unwatch", self.unwatch, methods=["POST"]),
        ]

    async def kept(self, caller: Caller, info: RunInfo, error: str = "") -> Kept | None:
        """What the run page shows of a finished run (None for one not finished)."""
        if info.status != "done":
            return None
        run_id = info.run_id
        watch = await keeping.watch_of(self.service, caller, run_id)
        return Kept(
            run_id,
            await keeping.latest_recheck(self.service, caller, run_id),
            watch,
            await keeping.versions(self.service, caller, run_id),  # they stay once stopped
            error,
        )

    async def recheck(self, request: Request) -> Response:
        """POST /runs/{id}/recheck: read every cited source again; the page shows the result."""
        thread_id = request.path_params["thread_id"]
        caller = self.caller_of(request)
        await self.service.read(caller, thread_id)  # UnknownRun before the form is read
        await checked_form(request)
        try:
            await keeping.recheck(self.service, caller, thread_id)
        except NotRecheckable as error:
            return await self.page_of(request, thread_id, str(error), 409)
        return RedirectResponse(f"/runs/{thread_id}#keeping", status_code=303)

    async def watch(self, request: Request) -> Response:
        """POST /runs/{id}/watch: research the question again every period the form names."""
        thread_id = request.path_params["thread_id"]
        caller = self.caller_of(request)
        await self.service.read(caller, thread_id)
        form = await checked_form(request)
        try:
            every = parse_every(str(form.get("every") or ""))
            await keeping.watch(self.service, caller, thread_id, every)
        except ValueError as error:  # an unusable period, or NotWatchable
            status = 409 if isinstance(error, NotWatchable) else 400
            return await self.page_of(request, thread_id, str(error), status)
        return RedirectResponse(f"/runs/{thread_id}#keeping", status_code=303)

    async def unwatch(self, request: Request) -> Response:
        """POST /runs/{id}/unwatch: stop watching (the versions made stay)."""
        thread_id = request.path_params["thread_id"]
        caller = self.caller_of(request)
        await self.service.read(caller, thread_id)
        await checked_form(request)
        await keeping.unwatch(self.service, caller, thread_id)
        return RedirectResponse(f"/runs/{thread_id}#keeping", status_code=303)
