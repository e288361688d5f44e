"""The web app's routes (Starlette): ask, watch, steer, read, history.

Pages are rendered on the server; the run page then listens to server-sent events, each carrying
the whole rendering of what changed, numbered by the run's event log so a reconnect resumes
from the last one seen (`Last-Event-ID`). Every state-changing request is a POST with the page's
anti-forgery token and an Origin (when the browser sends one) matching the host.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from importlib.resources import files
from typing import Any

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from deep_research.domain.labels import score_text
from deep_research.export.formats import Rendering
from deep_research.export.html_page import CSP as REPORT_CSP
from deep_research.export.pdf import PdfRendererMissing
from deep_research.service.admission import Operator
from deep_research.service.bad_input import BadInput
from deep_research.service.caller import Caller, Visibility
from deep_research.service.event_log import Record
from deep_research.service.executors import InProcess
from deep_research.service.runs import NotNow, RunInfo, RunService, UnknownRun, open_service
from deep_research.settings import usable_web_providers
from deep_research.state import PlanDecision
from deep_research.web.forms import FormErrors, checked_input, clarify_reply, edited_plan
from deep_research.web.guard import Guard, checked_form, csrf_token, user_of
from deep_research.web.history_filter import HistoryFilter
from deep_research.web.keeping_page import keeping_part
from deep_research.web.keeping_routes import KeepingRoutes
from deep_research.web.labels import UiLanguage, pick_language, words
from deep_research.web.pages import (
    LIVE,
    ask_page,
    controls,
    history_page,
    html_text,
    message_page,
    progress,
    run_page,
)
from deep_research.web.view import RunView, fold_record, rendering_of, view_of

PAGE_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
MEDIA = {
    "md": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pdf": "application/pdf",
}
PING_SECONDS = 15.0
RUN_PREFIX = "web-"  # the ids of the runs this app starts
HISTORY_ROWS = 500  # the newest runs the history page lists
EVENT_ID = re.compile(r"[0-9]{1,18}")


def _lang(request: Request) -> UiLanguage:
    """The page language for this request."""
    return pick_language(
        request.query_params.get("lang"),
        request.cookies.get("dr_lang"),
        request.headers.get("accept-language", ""),
    )


def _html(request: Request, text: str, status: int = 200) -> HTMLResponse:
    """A page, with the language choice remembered when the request made one."""
    response = HTMLResponse(text, status_code=status)
    if request.query_params.get("lang") in ("en", "zh"):
        response.set_cookie("dr_lang", request.query_params["lang"], samesite="strict")
    return response


class WebApp:
    """The routes over the run service, for the web's callers."""

    def __init__(self, service: RunService, guard: Guard) -> None:
        """Serve `service`'s runs; the operator's settings are its admission's."""
        self.service, self.guard = service, guard
        self.keeping = KeepingRoutes(service, _caller, self._run_page)

    @property
    def searches(self) -> list[str]:
        """The searches the form offers: the web providers this server can use, and its
        documents (alone or beside the web) when the operator named a folder."""
        documents = (
            ["local", "hybrid"] if self.service.admission.operator.settings.corpus_dir else []
        )
        return [*usable_web_providers(), *documents]

    async def _view(self, request: Request, thread_id: str) -> tuple[RunInfo, RunView]:
        """The run as its page shows it; UnknownRun unless this user may see it."""
        caller = _caller(request)
        info = await self.service.read(caller, thread_id)
        records = await self.service.events(caller, thread_id)
        return info, view_of(info, records)

    async def ask(self, request: Request) -> Response:
        """GET /: the form that starts a run."""
        return _html(request, ask_page(_lang(request), csrf_token(request), {}, {}, self.searches))

    async def start(self, request: Request) -> Response:
        """POST /runs: check the form (no paid call), start the run, go to its page."""
        posted = await checked_form(request)
        form = {k: v for k, v in posted.items() if isinstance(v, str)}
        try:
            admitted = await checked_input(form, self.service.admission, _lang(request))
        except FormErrors as error:
            text = ask_page(_lang(request), csrf_token(request), form, error.errors, self.searches)
            return _html(request, text, 400)
        thread_id = await self.service.start(_caller(request), admitted)
        return RedirectResponse(f"/runs/{thread_id}", status_code=303)

    async def run(self, request: Request) -> Response:
        """GET /runs/{id}: the run as it stands, then live."""
        return await self._run_page(request, request.path_params["thread_id"])

    async def _run_page(
        self, request: Request, thread_id: str, keeping_error: str = "", status: int = 200
    ) -> Response:
        """The run page; a finished run's with what keeps it true (re-check, watch)."""
        info, view = await self._view(request, thread_id)
        lang, csrf = _lang(request), csrf_token(request)
        kept = await self.keeping.kept(_caller(request), info, keeping_error)
        extra = [keeping_part(kept, lang, csrf)] if kept else []
        return _html(request, run_page(view, lang, csrf, extra=extra), status)

    async def events(self, request: Request) -> Response:
        """GET /runs/{id}/events: server-sent updates from the last one the browser saw."""
        thread_id = request.path_params["thread_id"]
        info, view = await self._view(request, thread_id)
        given = request.headers.get("last-event-id") or request.query_params.get("after") or ""
        after = event_id(given)
        lang, csrf = _lang(request), csrf_token(request)
        updates = self._updates(request, info, view, after, lang, csrf)
        return EventSourceResponse(updates, ping=PING_SECONDS)

    async def _updates(
        self,
        request: Request,
        info: RunInfo,
        view: RunView,
        after: int,
        lang: UiLanguage,
        csrf: str,
    ) -> AsyncIterator[ServerSentEvent]:
        """One message per change, each the whole rendering of what changed. The view is
        folded from the log once, then each update reads only the records that are new
        (`RunService.follow`); the checkpoint is read again only when the status changes."""
        caller, thread_id = _caller(request), info.run_id
        status = ""
        seen = view.last_seq
        updates = self.service.follow(caller, thread_id, seen, ping=PING_SECONDS)
        async for records in _and_once_more(updates):
            if await request.is_disconnected():
                return
            for record in records:
                fold_record(view, record)
            live = await self.service.executor.activity(thread_id)
            if live is None or live != view.status:
                if live is None:  # it stopped, ended or waits: its checkpoint says how
                    info = await self.service.read(caller, thread_id)
                    view = view_of(info, None, view)
                else:
                    view.status = live
            seq = str(view.last_seq)
            if view.status != status:
                status = view.status
                yield ServerSentEvent(
                    html_text(controls(view, lang, csrf)), event="controls", id=seq
                )
            if view.last_seq > after or view.status not in LIVE:
                after = view.last_seq
                yield ServerSentEvent(
                    html_text(progress(view, lang, csrf)), event="progress", id=seq, retry=1000
                )
            if view.status not in LIVE:
                yield ServerSentEvent("", event="end", id=seq)
                return

    async def act(self, request: Request) -> Response:
        """POST /runs/{id}/stop|resume|delete|plan|answers|ask: steer a run, then back to its
        page."""
        thread_id, action = request.path_params["thread_id"], request.path_params["action"]
        caller = _caller(request)
        await self.service.read(caller, thread_id)  # UnknownRun before the form is read
        form = await checked_form(request)
        try:
            if action == "stop":
                await self.service.stop(caller, thread_id)
            elif action == "resume":
                await self.service.resume(caller, thread_id)
            elif action == "delete":
                await self.service.delete(caller, thread_id)
                return RedirectResponse("/runs", status_code=303)
            elif action == "plan":
                return await self._decide(request, thread_id, form)
            elif action == "answers":
                info = await self.service.read(caller, thread_id)
                reply = clarify_reply(form, info.waiting_questions)
                await self.service.answer(caller, thread_id, reply)
            elif action == "ask":
                return await self._follow_up(request, thread_id, form)
            else:
                return Response(status_code=404)
        except NotNow as error:
            w = words(_lang(request))
            text = message_page(
                w["status"], str(error), _lang(request), csrf_token(request), "/runs"
            )
            return _html(request, text, 409)
        return RedirectResponse(f"/runs/{thread_id}", status_code=303)

    async def _follow_up(self, request: Request, thread_id: str, form: Any) -> Response:
        """A follow-up question on a finished run: a new run from its evidence, linked to it,
        admitted within the operator's ceilings (whatever the first run was allowed)."""
        question = str(form.get("question") or "")
        try:
            new = await self.service.follow_up(_caller(request), thread_id, question)
        except BadInput as error:
            _, view = await self._view(request, thread_id)
            text = run_page(view, _lang(request), csrf_token(request), follow_error=str(error))
            return _html(request, text, 400)
        return RedirectResponse(f"/runs/{new}", status_code=303)

    async def _decide(self, request: Request, thread_id: str, form: Any) -> Response:
        """The plan form's answer: approve, edit (as the form left the plan) or reject."""
        action = form.get("action")
        _, view = await self._view(request, thread_id)
        if action == "edit" and view.waiting_plan:
            try:
                plan = edited_plan(form, view.waiting_plan)
            except FormErrors as error:
                return _plan_refused(request, thread_id, str(error), 400)
            decision = PlanDecision(action="edit", plan=plan)
        elif action in ("approve", "reject"):
            decision = PlanDecision(action=action)
        else:
            return Response("unknown plan action", status_code=400)
        try:
            await self.service.decide(_caller(request), thread_id, decision)
        except NotNow as error:
            return _plan_refused(request, thread_id, str(error), 409)
        return RedirectResponse(f"/runs/{thread_id}", status_code=303)

    async def _rendering(self, request: Request) -> Rendering | None:
        """The finished run's report, as the CLI's export renders it; None when unfinished."""
        thread_id = request.path_params["thread_id"]
        info = await self.service.read(_caller(request), thread_id)
        return rendering_of(info) if info.status == "done" else None

    async def report(self, request: Request) -> Response:
        """GET /runs/{id}/report: the HTML export, with each citation's verdict and quote."""
        rendering = await self._rendering(request)
        if rendering is None:
            return Response("the run has not finished", status_code=409)
        response = HTMLResponse(rendering.html())
        response.headers["content-security-policy"] = REPORT_CSP
        return response

    async def export(self, request: Request) -> Response:
        """GET /runs/{id}/export.{fmt}: the same file `deep-research export` writes."""
        fmt = request.path_params["fmt"]
        if fmt not in MEDIA:
            return Response(status_code=404)
        rendering = await self._rendering(request)
        if rendering is None:
            return Response("the run has not finished", status_code=409)
        try:
            data = await asyncio.to_thread(rendering.render, fmt)
        except PdfRendererMissing as error:
            return Response(str(error), status_code=501, media_type="text/plain")
        name = f"report-{request.path_params['thread_id']}.{fmt}"
        headers = {"content-disposition": f'attachment; filename="{name}"'}
        if fmt == "html":
            headers["content-security-policy"] = REPORT_CSP
        return Response(data, media_type=MEDIA[fmt], headers=headers)

    async def history(self, request: Request) -> Response:
        """GET /runs: the newest runs this user may see, from the index of runs, narrowed by
        the search form (words of the question, status, started since a date)."""
        rows = [
            {
                "thread_id": listed.row.run_id,
                "question": listed.row.question,
                "status": listed.status,
                "score": score_text(listed.row.score, unknown="-"),
                "cost": "-" if listed.row.cost_usd is None else f"${listed.row.cost_usd:.4f}",
                "stop_reason": listed.row.stop_reason,
                "created_at": _iso(listed.row.created),
            }
            for listed in await self.service.list(_caller(request), HISTORY_ROWS)
        ]
        wanted = HistoryFilter.of(request.query_params)
        shown = [row for row in rows if wanted.keeps(row)]
        text = history_page(shown, _lang(request), csrf_token(request), wanted, len(rows))
        return _html(request, text)


def _caller(request: Request) -> Caller:
    """The web caller making the request (its user, "" without authentication)."""
    return Caller("web", user_of(request))


def _iso(seconds: float) -> str:
    """Unix seconds as the ISO time a page shows."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(seconds, UTC).isoformat()


def event_id(given: str) -> int:
    """An event id a browser sent (`Last-Event-ID`, `?after=`): ASCII digits, at most 18 of
    them; anything else is 0, from the start (never an error: `²` is a digit to `isdigit`, and
    `int` refuses a 5,000-digit one)."""
    return int(given) if EVENT_ID.fullmatch(given) else 0


async def _and_once_more(updates: AsyncIterator[list[Record]]) -> AsyncIterator[list[Record]]:
    """The batches of `updates`, then one empty batch: the page hears how the run ended."""
    async for batch in updates:
        yield batch
    yield []


async def _unknown(request: Request, error: Exception) -> Response:
    """An unknown (or not visible) run: 404 with a page saying so."""
    lang = _lang(request)
    text = message_page("404", str(error), lang, csrf_token(request), "/runs")
    return _html(request, text, 404)


async def _forbidden(request: Request, error: Exception) -> Response:
    """A state-changing request without its page's token: 403 with a page saying so."""
    lang = _lang(request)
    text = message_page("403", str(error), lang, csrf_token(request), "/")
    return _html(request, text, 403)


def build_app(service: RunService, guard: Guard) -> Starlette:
    """The Starlette app over an open run service."""
    web = WebApp(service, guard)
    static = StaticFiles(directory=str(files("deep_research.web").joinpath("static")))
    routes = [
        Route("/", web.ask),
        Route("/runs", web.start, methods=["POST"]),
        Route("/runs", web.history),
        Route("/runs/{thread_id}", web.run),
        Route("/runs/{thread_id}/events", web.events),
        Route("/runs/{thread_id}/report", web.report),
        Route("/runs/{thread_id}/export.{fmt}", web.export),
        *web.keeping.routes(),
        Route("/runs/{thread_id}/{action}", web.act, methods=["POST"]),
        Mount("/static", static, name="static"),
    ]
    app = Starlette(
        routes=routes, exception_handlers={UnknownRun: _unknown, PermissionError: _forbidden}
    )
    return guard.wrap(app, PAGE_CSP)


@contextlib.asynccontextmanager
async def serving(
    target: str,
    defaults: dict[str, Any],
    guard: Guard,
    max_runs: int = 2,
    other_doors: bool = False,
):
    """The app with its run service open (the web runs a stopped server left going resumed),
    closed (runs left resumable) after. `defaults`: the operator's settings, which a form may
    narrow; `other_doors`: the operator lets this app's users see other doors' runs."""
    operator = Operator(defaults, remote=True)
    async with open_service(
        target,
        operator,
        executor=InProcess(max_runs),
        visibility=Visibility(other_doors=other_doors),
        prefix=RUN_PREFIX,
        pooled=True,  # a server lives long: its PostgreSQL connections are checked before use
        notes=_note,
    ) as service:
        await service.resume_own("web")
        yield build_app(service, guard)


def _note(text: str) -> None:
    """A note of the service (a failed run) on the server's stderr."""
    import sys

    print(text, file=sys.stderr, flush=True)


def _plan_refused(request: Request, thread_id: str, why: str, status: int) -> Response:
    """The page saying why a plan answer was not taken (unusable edit, or not waiting now)."""
    lang = _lang(request)
    text = message_page(words(lang)["plan"], why, lang, csrf_token(request), f"/runs/{thread_id}")
    return _html(request, text, status)
