"""The web app's routes (Starlette): ask, watch, steer, read, history.

Pages are rendered on the server; the run page then listens to server-sent events, each carrying
the whole rendering of what changed, numbered by the run's event log so a reconnect resumes
from the last one seen (`Last-Event-ID`). Every state-changing request is a POST with the page's
anti-forgery token and an Origin (when the browser sends one) matching the host.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from importlib.resources import files
from typing import Any

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from deep_research.cli.bad_input import BadInput
from deep_research.cli.follow_up import follow_up_from
from deep_research.cli.preflight import check_credentials
from deep_research.domain.labels import score_text
from deep_research.export.facts import facts_of
from deep_research.export.formats import Rendering
from deep_research.export.html_page import CSP as REPORT_CSP
from deep_research.export.pdf import PdfRendererMissing
from deep_research.state import PlanDecision, output_of
from deep_research.web.forms import FormErrors, checked_input, edited_plan
from deep_research.web.guard import Guard, checked_form, csrf_token, user_of
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
from deep_research.web.runs import NotNow, UnknownRun, WebRuns

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
    """The routes over one run manager and the operator's settings."""

    def __init__(self, runs: WebRuns, defaults: dict[str, Any], guard: Guard) -> None:
        """Serve `runs`; `defaults` are the operator's settings a form may narrow."""
        self.runs, self.defaults, self.guard = runs, defaults, guard

    async def _visible(self, request: Request, thread_id: str) -> None:
        """UnknownRun unless the run exists and this user may see it."""
        started = await self.runs.events.first(thread_id, "started")
        owner = started.data.get("owner", "") if started else ""
        if not self.guard.may_see(user_of(request), owner):
            raise UnknownRun(f"no run with id {thread_id!r}")
        await self.runs.view(thread_id)

    async def ask(self, request: Request) -> Response:
        """GET /: the form that starts a run."""
        corpus = bool(self.defaults.get("corpus_dir"))
        return _html(request, ask_page(_lang(request), csrf_token(request), {}, {}, corpus))

    async def start(self, request: Request) -> Response:
        """POST /runs: check the form (no paid call), start the run, go to its page."""
        posted = await checked_form(request)
        form = {k: v for k, v in posted.items() if isinstance(v, str)}
        try:
            graph_input = await checked_input(form, self.defaults)
        except FormErrors as error:
            corpus = bool(self.defaults.get("corpus_dir"))
            text = ask_page(_lang(request), csrf_token(request), form, error.errors, corpus)
            return _html(request, text, 400)
        thread_id = await self.runs.start(graph_input, owner=user_of(request))
        return RedirectResponse(f"/runs/{thread_id}", status_code=303)

    async def run(self, request: Request) -> Response:
        """GET /runs/{id}: the run as it stands, then live."""
        thread_id = request.path_params["thread_id"]
        await self._visible(request, thread_id)
        view = await self.runs.view(thread_id)
        return _html(request, run_page(view, _lang(request), csrf_token(request)))

    async def events(self, request: Request) -> Response:
        """GET /runs/{id}/events: server-sent updates from the last one the browser saw."""
        thread_id = request.path_params["thread_id"]
        await self._visible(request, thread_id)
        given = request.headers.get("last-event-id") or request.query_params.get("after") or "0"
        after = int(given) if given.isdigit() else 0
        lang, csrf = _lang(request), csrf_token(request)
        return EventSourceResponse(
            self._updates(request, thread_id, after, lang, csrf), ping=PING_SECONDS
        )

    async def _updates(
        self, request: Request, thread_id: str, after: int, lang: UiLanguage, csrf: str
    ) -> AsyncIterator[ServerSentEvent]:
        """One message per change, each the whole rendering of what changed."""
        status = ""
        while not await request.is_disconnected():
            view = await self.runs.view(thread_id)
            seq = str(view.last_seq)
            if view.status != status:
                status = view.status
                yield ServerSentEvent(
                    html_text(controls(view, lang, csrf)), event="controls", id=seq
                )
            if view.last_seq > after or view.status not in LIVE:
                after = view.last_seq
                yield ServerSentEvent(
                    html_text(progress(view, lang)), event="progress", id=seq, retry=1000
                )
            if view.status not in LIVE:
                yield ServerSentEvent("", event="end", id=seq)
                return
            await self.runs.news(thread_id, PING_SECONDS)

    async def act(self, request: Request) -> Response:
        """POST /runs/{id}/stop|resume|delete|plan: steer a run, then back to its page."""
        thread_id, action = request.path_params["thread_id"], request.path_params["action"]
        await self._visible(request, thread_id)
        form = await checked_form(request)
        try:
            if action == "stop":
                await self.runs.stop(thread_id)
            elif action == "resume":
                await self.runs.resume(thread_id)
            elif action == "delete":
                await self.runs.delete(thread_id)
                return RedirectResponse("/runs", status_code=303)
            elif action == "plan":
                return await self._decide(request, thread_id, form)
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
        """A follow-up question on a finished run: a new run from its evidence, linked to it."""
        question = form.get("question")
        snapshot = await self.runs.snapshot(thread_id)
        try:
            graph_input = follow_up_from(snapshot, thread_id, str(question or ""))
            await asyncio.to_thread(check_credentials, graph_input["settings"])
        except BadInput as error:
            view = await self.runs.view(thread_id)
            text = run_page(view, _lang(request), csrf_token(request), follow_error=str(error))
            return _html(request, text, 400)
        owner = user_of(request)
        new = await self.runs.start(graph_input, owner=owner, parent=thread_id)
        return RedirectResponse(f"/runs/{new}", status_code=303)

    async def _decide(self, request: Request, thread_id: str, form: Any) -> Response:
        """The plan form's answer: approve, edit (as the form left the plan) or reject."""
        action = form.get("action")
        view = await self.runs.view(thread_id)
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
            await self.runs.decide(thread_id, decision)
        except NotNow as error:
            return _plan_refused(request, thread_id, str(error), 409)
        return RedirectResponse(f"/runs/{thread_id}", status_code=303)

    async def _rendering(self, request: Request) -> Rendering | None:
        """The finished run's report, as the CLI's export renders it; None when unfinished."""
        thread_id = request.path_params["thread_id"]
        await self._visible(request, thread_id)
        snapshot = await self.runs.snapshot(thread_id)
        values = snapshot.values
        if snapshot.next or not values.get("stop_reason"):
            return None
        from datetime import datetime

        finished = datetime.fromisoformat(snapshot.created_at) if snapshot.created_at else None
        output = output_of(values)
        return Rendering(output, facts_of({**values, **output}, finished, thread_id))

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
        """GET /runs: every run this user may see, newest first."""
        rows = []
        user = user_of(request)
        for thread_id, snapshot in await self.runs.recent():
            started = await self.runs.events.first(thread_id, "started")
            if not self.guard.may_see(user, started.data.get("owner", "") if started else ""):
                continue
            view = await self.runs.view(thread_id)
            quality = snapshot.values.get("quality")
            cost = snapshot.values.get("cost_usd")
            rows.append(
                {
                    "thread_id": thread_id,
                    "question": view.question,
                    "status": view.status,
                    "score": score_text(None if quality is None else quality.score, "-"),
                    "cost": "-" if cost is None else f"${cost:.4f}",
                    "stop_reason": view.stop_reason,
                    "created_at": snapshot.created_at,
                }
            )
        return _html(request, history_page(rows, _lang(request), csrf_token(request)))


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


def build_app(runs: WebRuns, defaults: dict[str, Any], guard: Guard) -> Starlette:
    """The Starlette app over an open run manager."""
    web = WebApp(runs, defaults, guard)
    static = StaticFiles(directory=str(files("deep_research.web").joinpath("static")))
    routes = [
        Route("/", web.ask),
        Route("/runs", web.start, methods=["POST"]),
        Route("/runs", web.history),
        Route("/runs/{thread_id}", web.run),
        Route("/runs/{thread_id}/events", web.events),
        Route("/runs/{thread_id}/report", web.report),
        Route("/runs/{thread_id}/export.{fmt}", web.export),
        Route("/runs/{thread_id}/{action}", web.act, methods=["POST"]),
        Mount("/static", static, name="static"),
    ]
    app = Starlette(
        routes=routes, exception_handlers={UnknownRun: _unknown, PermissionError: _forbidden}
    )
    return guard.wrap(app, PAGE_CSP)


@contextlib.asynccontextmanager
async def serving(target: str, defaults: dict[str, Any], guard: Guard, max_runs: int = 2):
    """The app with its run manager open (runs resumed), closed (runs left resumable) after."""
    async with WebRuns(target, max_runs) as runs:
        yield build_app(runs, defaults, guard)


def _plan_refused(request: Request, thread_id: str, why: str, status: int) -> Response:
    """The page saying why a plan answer was not taken (unusable edit, or not waiting now)."""
    lang = _lang(request)
    text = message_page(words(lang)["plan"], why, lang, csrf_token(request), f"/runs/{thread_id}")
    return _html(request, text, status)
