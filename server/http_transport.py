"""`deep-research mcp --http`: the streamable HTTP app, its header checks, its token, its socket.

The SDK turns its DNS-rebinding check (the `Host` and `Origin` headers) on by itself only for
127.0.0.1, localhost and ::1; we pass it for every address served, so a page that rebinds a
name to 127.0.0.2 cannot start runs either. Any local user can reach a loopback port: a bearer
token (`--token`, `--token-file`), checked by the SDK's bearer middleware on every request,
keeps them out. The socket is bound before the server starts, so a port in use is one line.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import socket
from typing import Any

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings

from deep_research.service.bad_input import BadInput

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
MIN_TOKEN_LENGTH = 16
MAX_TOKEN_FILE_BYTES = 4096


def _in_url(host: str) -> str:
    """A host as it appears in a URL or a Host header (IPv6 in brackets)."""
    return f"[{host}]" if ":" in host else host


def _wildcard(host: str) -> bool:
    """Whether `host` means every interface (0.0.0.0, ::), which no client names."""
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


def transport_security(host: str, port: int, extra_hosts: list[str]) -> TransportSecuritySettings:
    """The `Host` values (and their `Origin`s) the server answers, on whatever address it serves.

    The address served, by the name or number it was given; on the usual loopback names all
    three of them; and the names an operator adds (`--allowed-host`, a proxy's public name).
    """
    served = _in_url(host)
    names = list(LOOPBACK_NAMES) if served in LOOPBACK_NAMES else []
    names += [] if _wildcard(host) or served in names else [served]
    hosts = [f"{name}:{port}" for name in names] + list(extra_hosts)
    if not hosts:
        raise BadInput(
            f"--http {host}: a client never names this address: give the name clients use "
            "with --allowed-host NAME[:PORT] (the Host header the server accepts)"
        )
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


class StaticToken:
    """A `TokenVerifier` for one shared bearer token, compared in constant time."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        """The caller's access when its token is the server's, else None (a 401)."""
        if hmac.compare_digest(token.encode(), self._token):
            return AccessToken(token="***", client_id="token-holder", scopes=[])
        return None


def auth_settings(url: str) -> AuthSettings:
    """What the SDK needs to require a bearer token: this server as its own issuer."""
    return AuthSettings(issuer_url=url, resource_server_url=None)


def read_token(token: str | None, token_file: str | None) -> str | None:
    """The bearer token from `--token` or the first line of `--token-file`; BadInput naming
    the flag when it is unreadable, empty or short."""
    if token_file is not None:
        try:
            with open(token_file, "rb") as handle:
                raw = handle.read(MAX_TOKEN_FILE_BYTES + 1)
        except OSError as error:
            raise BadInput(f"--token-file {token_file}: {error.strerror or error}") from None
        if len(raw) > MAX_TOKEN_FILE_BYTES:
            raise BadInput(f"--token-file {token_file}: larger than {MAX_TOKEN_FILE_BYTES} bytes")
        lines = raw.decode("utf-8", "replace").splitlines()
        token, flag = (lines[0].strip() if lines else ""), "--token-file"
    else:
        flag = "--token"
    if token is None:
        return None
    if len(token) < MIN_TOKEN_LENGTH or not token.isprintable() or " " in token:
        raise BadInput(
            f"{flag}: a token is at least {MIN_TOKEN_LENGTH} printable characters without "
            "spaces (e.g. `python -c 'import secrets; print(secrets.token_urlsafe())'`)"
        )
    return token


def listening_socket(host: str, port: int) -> socket.socket:
    """The server's socket, bound and listening; BadInput with the cause (a port in use)."""
    try:
        family = socket.AF_INET6 if ipaddress.ip_address(host).version == 6 else socket.AF_INET
    except ValueError:  # a name such as localhost
        family = socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as error:  # socket.create_server adds the address to strerror: say it once
        cause = os.strerror(error.errno) if error.errno else str(error)
        raise BadInput(f"--http {_in_url(host)}:{port}: cannot listen there: {cause}") from None


async def serve_http(app: Any, listener: socket.socket, log_level: str) -> None:
    """Serve the app on the bound socket until stopped."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, log_level=log_level.lower()))
    await server.serve(sockets=[listener])
