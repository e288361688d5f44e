"""Who may use the web app, and the walls around every request.

- Host: only the names the server was told it is reached by (a DNS-rebinding page gets 400).
- Who: nobody is asked on loopback; with `--allow-remote`, a bearer token from the operator's
  tokens file (`user:token` per line), or the user name a trusted reverse proxy puts in a header.
- Forgery: a state-changing request needs an Origin (when the browser sends one) equal to the
  host, and the page's anti-forgery token (a cookie the page repeats in its form).
- Headers: a Content-Security-Policy that allows scripts from this server only, no framing.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

CSRF_COOKIE = "dr_csrf"
TOKEN_COOKIE = "dr_token"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


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
        refusal, user, new_cookies = self._check(request)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        csrf = request.cookies.get(CSRF_COOKIE) or ""
        if len(csrf) < 32:
            csrf = secrets.token_urlsafe(32)
            new_cookies.append(_cookie(CSRF_COOKIE, csrf))
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

        await self.app(scope, receive, send_with_headers)

    def _check(self, request: Request) -> tuple[Response | None, str, list[str]]:
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
            return self._token_user(request)
        return None, "", []

    def _token_user(self, request: Request) -> tuple[Response | None, str, list[str]]:
        """The user of a bearer token (header, cookie, or a `?token=` link that sets the cookie)."""
        given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        given = given or request.cookies.get(TOKEN_COOKIE, "")
        link = request.query_params.get("token", "")
        for token, user in self.guard.tokens.items():
            if link and hmac.compare_digest(link, token):
                response = RedirectResponse(request.url.path, status_code=303)
                response.headers.append("set-cookie", _cookie(TOKEN_COOKIE, token))
                return response, user, []
            if given and hmac.compare_digest(given, token):
                return None, user, []
        return PlainTextResponse("a valid token is needed", status_code=401), "", []


def _cookie(name: str, value: str) -> str:
    """A Set-Cookie value: HttpOnly, SameSite=Strict, for the whole site."""
    cookie = SimpleCookie()
    cookie[name] = value
    cookie[name].update({"httponly": True, "samesite": "Strict", "path": "/"})
    return cookie[name].OutputString()
