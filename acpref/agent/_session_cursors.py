"""The cursors of ``session/list``: opaque to the client, unforgeable, naming a page's last session.

Spec: session-list.mdx (Pagination); clauses LIST-11, LIST-12; spec-gap invalid-cursor
(spec_notes/decisions.md). Used by ``_sessions.SessionRegistry.list``.

A cursor is keyset pagination: it carries the listing key (``updatedAt``, ``touched``) of the last
session of the page it follows, so sessions created or deleted between two pages do not shift the
next one. It is signed with a key made when the registry is, so that a cursor this registry did
not issue (made up, altered, or from an earlier agent process) is refused as ``InvalidCursor``.

What must not live here: wire I/O and the protocol rules.
"""

from __future__ import annotations

import base64
import json
import os
from typing import Tuple

__all__ = ["InvalidCursor", "ListCursors"]


class InvalidCursor(ValueError):
    """A ``session/list`` cursor this registry did not issue (spec LIST-12)."""


class ListCursors:
    """Makes and reads the signed cursors of one registry."""

    def __init__(self) -> None:
        #: Signs list cursors, so that they stay opaque and unforgeable (LIST-11, LIST-12).
        self._key = os.urandom(16)

    def _mac(self, payload: bytes) -> bytes:
        # Imported here: hashlib loads OpenSSL, about 4 MiB of memory an agent that never lists
        # sessions need not carry.
        import hashlib
        import hmac

        return hmac.new(self._key, payload, hashlib.sha256).digest()[:12]

    def encode(self, key: Tuple[str, int]) -> str:
        """The cursor of the page after the session whose listing key is ``key``."""
        payload = json.dumps(list(key), separators=(",", ":")).encode()
        mac = self._mac(payload)
        return base64.urlsafe_b64encode(payload + mac).decode().rstrip("=")

    def decode(self, cursor: str) -> Tuple[str, int]:
        """The listing key a cursor carries; ``InvalidCursor`` if this registry did not issue it."""
        import hmac  # see _mac

        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
            payload, mac = raw[:-12], raw[-12:]
            if not hmac.compare_digest(mac, self._mac(payload)):
                raise ValueError("bad signature")
            updated_at, touched = json.loads(payload)
            return (str(updated_at), int(touched))
        except Exception:  # noqa: BLE001 - any malformed or foreign cursor is simply invalid
            # spec-gap invalid-cursor: not signed by this registry (or damaged): invalid.
            raise InvalidCursor(f"invalid cursor {cursor!r}") from None
