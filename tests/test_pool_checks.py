"""httpcore's pool learns that a server closed an idle connection from the socket the
connection kept, not from anyio's attribute tables (`tools/pool_checks.py`)."""

from __future__ import annotations

import asyncio
import socket

import httpx

from deep_research.settings import Settings
from deep_research.tools.pool_checks import QuickReadable, QuickReadableBackend, quickened, readable
from deep_research.tools.search.clients import SearchClients
from deep_research.tools.search.tavily import TavilySearch

REPLY = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"


def test_readable_means_data_or_the_peers_close():
    ours, theirs = socket.socketpair()
    try:
        assert not readable(ours)
        theirs.sendall(b"x")
        assert readable(ours)
        ours.recv(1)
        assert not readable(ours)
        theirs.close()
        assert readable(ours)  # the close: a read would return b""
    finally:
        ours.close()
    assert readable(ours) and readable(None)  # gone: httpcore drops the connection


async def _two_requests_to_a_server_that_closes_idle_connections() -> tuple[list[str], int]:
    """Two requests through one client; the server answers each connection once (keep-alive,
    no `Connection: close`) and then closes it while the client holds it idle."""
    accepted = 0

    async def answer_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal accepted
        accepted += 1
        await reader.readuntil(b"\r\n\r\n")
        writer.write(REPLY)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer_once, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = SearchClients().httpx_here(("closing",), timeout=5)
    try:
        texts = []
        for _ in range(2):
            texts.append((await client.get(f"http://127.0.0.1:{port}/")).text)
            await asyncio.sleep(0.05)  # the server's close reaches the idle connection
        return texts, accepted
    finally:
        await client.aclose()
        server.close()


def test_a_connection_the_server_closed_is_not_used_again():
    texts, accepted = asyncio.run(_two_requests_to_a_server_that_closes_idle_connections())
    assert texts == ["ok", "ok"] and accepted == 2


def test_the_search_clients_connect_through_quick_readable_streams(search_server):
    async def backends():
        clients = [
            SearchClients().httpx_here(("any",), timeout=5),
            TavilySearch(Settings(), SearchClients())._client()._client,
        ]
        return [client._transport._pool._network_backend for client in clients]

    assert all(isinstance(b, QuickReadableBackend) for b in asyncio.run(backends()))


def test_tls_keeps_the_socket_it_started_with():
    class Plain:
        """A stream whose every instance names its own socket (TLS over TCP would not)."""

        made = 0

        def __init__(self):
            Plain.made += 1
            self.number = Plain.made

        def get_extra_info(self, info):
            return f"socket {self.number}" if info == "socket" else f"info of {self.number}"

        async def start_tls(self, ssl_context, server_hostname=None, timeout=None):
            return Plain()

    stream = QuickReadable(Plain())
    tls = asyncio.run(stream.start_tls(None))
    assert tls._socket == "socket 1"  # the connection's own, not the TLS stream's
    assert tls.get_extra_info("server_addr") == "info of 2"  # the rest from the TLS stream


def test_proxies_from_the_environment_are_still_mounted(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")

    async def mounts():
        client = SearchClients().httpx_here(("proxied",), timeout=5)
        try:
            return client._mounts
        finally:
            await client.aclose()

    assert asyncio.run(mounts())  # a proxy transport per scheme, as httpx mounts them


def _self_signed(folder) -> tuple[str, str]:
    """A certificate for 127.0.0.1 and its key, as PEM files (a server of our own speaking TLS)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(cert_file), str(key_file)


def test_over_tls_an_idle_connection_is_checked_and_a_closed_one_dropped(tmp_path):
    """A keep-alive TLS server (as every hosted provider is): requests share one connection
    while it is open, its idle check reads the socket under TLS, and once the server closes
    it the next request opens another."""
    import ssl

    cert, key = _self_signed(tmp_path)
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, key)
    client_tls = ssl.create_default_context(cafile=cert)

    async def main():
        accepted, writers = 0, []

        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal accepted
            accepted += 1
            writers.append(writer)
            while await reader.readuntil(b"\r\n\r\n"):
                writer.write(REPLY)
                await writer.drain()

        server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=server_tls)
        url = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/"
        client = quickened(httpx.AsyncClient(verify=client_tls))
        try:
            texts = [(await client.get(url)).text for _ in range(2)]
            (connection,) = client._transport._pool.connections
            stream = connection._connection._network_stream
            assert isinstance(stream, QuickReadable)
            assert stream.get_extra_info("ssl_object") is not None  # TLS, from the stream
            assert not stream.get_extra_info("is_readable")  # idle, open
            assert accepted == 1
            writers[0].close()  # the server ends the idle connection
            await asyncio.sleep(0.05)
            texts.append((await client.get(url)).text)
            return texts, accepted
        finally:
            await client.aclose()
            server.close()

    texts, accepted = asyncio.run(main())
    assert texts == ["ok", "ok", "ok"] and accepted == 2
