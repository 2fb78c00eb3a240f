"""Keeping secrets out of logs and reasons: ``env`` values and HTTP ``headers`` values.

Spec: session-setup.mdx (MCP Servers) puts API keys in a stdio server's ``env`` and tokens in
an HTTP server's ``headers``. acpref never logs nor reports those values itself: it names
variables and headers, never their values. But text that comes *from* a server (its stderr, an
error body) may echo a secret back; ``Redactor`` replaces every known secret in such text by
``***`` before it is logged or put in a failure reason. URLs are shown without their query and
user info (``safe_url``), where tokens also travel.

Nothing here does I/O.
"""

from __future__ import annotations

from typing import Iterable
from urllib.parse import urlsplit, urlunsplit

__all__ = ["Redactor", "safe_url"]

#: Shorter values are not searched for in server text: "1" or "on" would blank out everything.
#: acpref itself never writes any value, whatever its length.
_MIN_SECRET = 4
#: A header's words this long are secrets of their own ("Bearer <token>" echoed as "<token>").
_MIN_WORD = 8
MASK = "***"


class Redactor:
    """Replaces known secret values in text by ``***``."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        found = set()
        for value in secrets:
            if len(value) >= _MIN_SECRET:
                found.add(value)
            found.update(word for word in value.split() if len(word) >= _MIN_WORD)
        # Longest first, so that a secret holding a shorter one is masked whole.
        self._secrets = sorted(found, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text


def safe_url(url: str) -> str:
    """``url`` without user info, query or fragment: what may appear in logs and reasons."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"  # an IPv6 literal keeps its brackets
        if parts.port is not None:
            host = f"{host}:{parts.port}"
    except ValueError:
        return "<invalid url>"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
