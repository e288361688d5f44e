"""Who may use the web app, and the walls around every request.

- Host: only the names the server was told it is reached by (a DNS-rebinding page gets 400).
- Who: nobody is asked on loopback; with `--allow-remote`, a bearer token from the operator's
  tokens file (`user:token` per line), or the user name a trusted reverse proxy puts in a header.
- Forgery: a state-changing request needs an Origin (when the browser sends one) equal to the
  host, and the page's anti-forgery token (a cookie the page repeats in its form). Its body is
  a plain form of at most MAX_FORM_BYTES, read into memory (never spooled to disk) before any
  check that needs it: anything larger, or of another type (multipart), is refused unread.
- Sign-in links: `?token=...` never signs a browser in by itself (a link from someone else
  would swap the session, and every question after it would land in their history): it shows
  whom it signs in as, and a button (a form with the page's token) does it. The page it leads
  back to is a path on this server, never another site (`//evil.example/`).
- Headers: a Content-Security-Policy that allows scripts from this server only, no framing.
"""

from __future__ import annotations

import hmac
import html
import secrets
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response

CSRF_COOKIE = "dr_csrf"
TOKEN_COOKIE = "dr_token"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
MAX_FORM_BYTES = 256 * 1024  # the largest form this app takes (a question, an edited plan)
FORM_TYPE = "application/x-www-form-urlencoded"
SIGN_IN = "/sign-in"


class BadTokensFile(ValueError):
    """The tokens file cannot be read as `user:token` lines."""


def read_tokens(path: Path) -> dict[str, str]:
    """token → user from a file of `user:token` lines (# comments and blank lines skipped)."""
    tokens: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise BadTokensFile(f"cannot read the tokens file {path}: {error.strerror}") from None
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        user, _, token = line.partition(":")
        if not user.strip() or len(token.strip()) < 16:
            raise BadTokensFile(
                f"{path} line {number}: expected user:token with a token of 16 characters or more"
            )
        tokens[token.strip()] = user.strip()
    if not tokens:
        raise BadTokensFile(f"{path} holds no user:token line")
    return tokens


@dataclass
class Guard:
    """The checks of one server: its host names and how it knows who calls."""

    hosts: list[str]
    tokens: dict[str, str] = field(default_factory=dict)
    user_header: str = ""

    @property
    def authenticates(self) -> bool:
        """True when callers are told apart (tokens or a proxy's header)."""
        return bool(self.tokens or self.user_header)

    def may_see(self, user: str, owner: str) -> bool:
        """Whether `user` may see a run `owner` started: anyone without authentication; with it,
        the user who started it only (runs from the CLI or MCP have no web owner)."""
        return not self.authenticates or (bool(user) and user == owner)

    def wrap(self, app: Any, csp: str) -> Any:
        """The app behind these checks."""
        return _Guarded(app, self, csp)


def user_of(request: Request) -> str:
    """Who made the request ("" without authentication)."""
    return request.scope.get("state", {}).get("user", "")


def csrf_token(request: Request) -> str:
    """The anti-forgery token of this browser (set as a cookie on this response if new)."""
    return request.scope.get("state", {}).get("csrf", "")


async def checked_form(request: Request) -> Any:
    """The posted form, once its anti-forgery token matches the cookie; PermissionError if not."""
    form = await request.form()
    sent = form.get("csrf")
    if not isinstance(sent, str) or not hmac.compare_digest(sent, csrf_token(request) or "-"):
        raise PermissionError("the form's anti-forgery token is missing or stale: reload the page")
    return form


def _host_name(host: str) -> str:
    """The name part of a Host header (no port; IPv6 brackets kept off)."""
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class _Guarded:
    """ASGI middleware applying a Guard to HTTP requests."""

    def __init__(self, app: Any, guard: Guard, csp: str) -> None:
        """Wrap `app`; pages get `csp` unless a route set its own policy."""
        self.app, self.guard, self.csp = app, guard, csp

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        """Refuse what fails a check; otherwise pass on, with the headers added."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        if request.method not in SAFE_METHODS:
            body = await _bounded_body(request, receive)
            if isinstance(body, Response):
                await body(scope, receive, send)
                return
            receive = _replay(body)
            request = Request(scope, receive)
        csrf = request.cookies.get(CSRF_COOKIE) or ""
        new_cookies: list[str] = []
        if len(csrf) < 32:
            csrf = secrets.token_urlsafe(32)
            new_cookies.append(_cookie(CSRF_COOKIE, csrf))
        refusal, user, cookies = await self._check(request, csrf)
        new_cookies += cookies
        scope.setdefault("state", {}).update(user=user, csrf=csrf)

        async def send_with_headers(message: dict) -> None:
            """Add the security headers and new cookies to the response's start."""
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {name.lower() for name, _ in headers}
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", self.csp.encode()))
                headers += [
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"same-origin"),
                    (b"x-frame-options", b"DENY"),
                ]
                headers += [(b"set-cookie", c.encode("latin-1")) for c in new_cookies]
                message = {**message, "headers": headers}
            await send(message)

        if refusal is not None:
            await refusal(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)

    async def _check(self, request: Request, csrf: str) -> tuple[Response | None, str, list[str]]:
        """(a refusal or None, the user, cookies to set)."""
        host = request.headers.get("host", "")
        if _host_name(host).lower() not in self.guard.hosts:
            return PlainTextResponse("unknown host name", status_code=400), "", []
        if request.method not in SAFE_METHODS:
            origin = request.headers.get("origin")
            if origin is not None and origin != f"{request.url.scheme}://{host}":
                return PlainTextResponse("cross-origin request refused", status_code=403), "", []
        if self.guard.user_header:
            user = request.headers.get(self.guard.user_header, "").strip()
            if not user:
                return PlainTextResponse("no user from the proxy", status_code=401), "", []
            return None, user, []
        if self.guard.tokens:
            return await self._token_user(request, csrf)
        return None, "", []

    def _user_of(self, token: str) -> str | None:
        """The user a token belongs to, compared in constant time; None for no user's."""
        found = None
        for known, user in self.guard.tokens.items():
            if token and hmac.compare_digest(token, known):
                found = user
        return found

    async def _token_user(
        self, request: Request, csrf: str
    ) -> tuple[Response | None, str, list[str]]:
        """The user of a bearer token (header or cookie). A `?token=` link only offers to sign
        in, on a page that names the user; `POST /sign-in` from that page does it."""
        given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        user = self._user_of(given or request.cookies.get(TOKEN_COOKIE, ""))
        if request.url.path == SIGN_IN and request.method == "POST":
            return await self._sign_in(request, csrf), user or "", []
        link = request.query_params.get("token", "")
        if link:
            linked = self._user_of(link)
            if linked is None:
                return PlainTextResponse("a valid token is needed", status_code=401), "", []
            back = local_path(request.url.path)
            if linked == user:  # signed in as this user already: the address without the token
                return RedirectResponse(back, status_code=303), user, []
            return _sign_in_page(linked, user, link, back, csrf), user or "", []
        if user is None:
            return PlainTextResponse("a valid token is needed", status_code=401), "", []
        return None, user, []

    async def _sign_in(self, request: Request, csrf: str) -> Response:
        """`POST /sign-in`: the sign-in page's button; the form's anti-forgery token must match."""
        form = await request.form()
        sent, token = form.get("csrf"), form.get("token")
        if not isinstance(sent, str) or not hmac.compare_digest(sent, csrf):
            return PlainTextResponse("the sign-in form is stale: open the link again", 403)
        if not isinstance(token, str) or self._user_of(token) is None:
            return PlainTextResponse("a valid token is needed", status_code=401)
        response = RedirectResponse(local_path(str(form.get("next") or "/")), status_code=303)
        response.headers.append("set-cookie", _cookie(TOKEN_COOKIE, token))
        return response


def local_path(path: str) -> str:
    """A path on this server to send a browser back to: one leading slash, never another
    site's address (`//evil.example/` is a host to a browser) nor a scheme."""
    path = path.replace("\\", "/")
    return "/" + path.lstrip("/") if "://" not in path else "/"


def _sign_in_page(user: str, current: str | None, token: str, back: str, csrf: str) -> Response:
    """The page a sign-in link opens: whom it signs in as (and who is signed in now), and the
    button that does it."""
    now = f"<p>You are signed in as {html.escape(current)}.</p>" if current else ""
    text = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        "<title>Sign in</title></head><body><main>"
        f"<h1>Sign in as {html.escape(user)}?</h1>{now}"
        f'<form method="post" action="{SIGN_IN}">'
        f'<input type="hidden" name="csrf" value="{html.escape(csrf)}">'
        f'<input type="hidden" name="token" value="{html.escape(token)}">'
        f'<input type="hidden" name="next" value="{html.escape(back)}">'
        f'<button type="submit">Sign in as {html.escape(user)}</button></form>'
        f'<p><a href="{quote(back)}">Go on without signing in</a></p>'
        "</main></body></html>"
    )
    return HTMLResponse(text, headers={"cache-control": "no-store"})


async def _bounded_body(request: Request, receive: Any) -> bytes | Response:
    """A state-changing request's body, read into memory: at most MAX_FORM_BYTES of a plain
    form; a refusal (413, 415) for anything else, read no further."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind and kind != FORM_TYPE:
        return PlainTextResponse(f"forms only ({FORM_TYPE})", status_code=415)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and len(declared) < 19 and int(declared) > MAX_FORM_BYTES:
        return PlainTextResponse("the form is too large", status_code=413)
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        body += message.get("body", b"")
        if len(body) > MAX_FORM_BYTES:
            return PlainTextResponse("the form is too large", status_code=413)
        if not message.get("more_body"):
            break
    return bytes(body)


def _replay(body: bytes) -> Any:
    """An ASGI `receive` that hands the app a body already read."""
    sent = False

    async def receive() -> dict:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def _cookie(name: str, value: str) -> str:
    """A Set-Cookie value: HttpOnly, SameSite=Strict, for the whole site."""
    cookie = SimpleCookie()
    cookie[name] = value
    cookie[name].update({"httponly": True, "samesite": "Strict", "path": "/"})
    return cookie[name].OutputString()
