"""The service's listening socket, bound before anything is loaded or announced, so that a port
in use or an address that does not exist is one clear error and nothing claims to serve."""

from __future__ import annotations

import errno
import socket

from tts.errors import TTSError


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening (IPv4 or IPv6, as ``host`` resolves)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise TTSError(f"--host {host}: not an address of this machine ({exc}); use 127.0.0.1 or 0.0.0.0") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise TTSError(f"port {port} on {host} is in use (another tts serve?): choose another --port") from None
        if exc.errno == errno.EACCES:
            raise TTSError(f"port {port} on {host} needs privileges this user lacks: choose a port above 1023") from None
        raise TTSError(f"cannot listen on {host}:{port} ({exc.strerror}): check --host and --port") from None
    return sock
