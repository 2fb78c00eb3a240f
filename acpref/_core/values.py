"""Checks on single values that several rules share: absolute paths, timestamps, line numbers.

Spec: overview.mdx (Argument requirements); clauses OVERVIEW-06, OVERVIEW-07, LIST-06. And the
heuristics of elicitation.mdx (ELICIT-15, ELICIT-30, ELICIT-31, ELICIT-32): no rule can know what
a form field is for or what a URL's query grants, so these only recognise the usual names of
secrets, credentials in a URL, a plain-http URL outside development, and links in text.
"""

from __future__ import annotations

import re
from typing import Any, List
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = [
    "is_absolute_path",
    "is_below",
    "is_iso8601",
    "is_one_based",
    "names_a_secret",
    "url_credentials",
    "is_development_url",
    "has_link",
]

_WINDOWS_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")
_ISO8601 = re.compile(
    r"^\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?)?$"
)


def is_absolute_path(path: Any) -> bool:
    """True for an absolute POSIX path, or an absolute Windows path (drive or UNC).

    spec OVERVIEW-06: every file-system path in ACP params or results is absolute.
    """
    if not isinstance(path, str) or not path:
        return False
    return path.startswith("/") or bool(_WINDOWS_ABSOLUTE.match(path))


def is_below(path: str, root: str, sep: str = "/") -> bool:
    """True when ``path`` is ``root`` or lies below it, by their text (both already normalised,
    written with ``sep``): ``/a/bc`` is not below ``/a/b``."""
    return path == root or path.startswith(root.rstrip(sep) + sep)


def is_iso8601(value: Any) -> bool:
    """True for an ISO 8601 date or date-time (spec LIST-06)."""
    return isinstance(value, str) and bool(_ISO8601.match(value))


def is_one_based(value: Any) -> bool:
    """True for a line number that can be 1-based: an integer >= 1 (spec OVERVIEW-07)."""
    return type(value) is int and value >= 1


# -- Elicitation heuristics (words, not meaning: spec-gap elicitation-secret-heuristics) ---------

#: The usual names of secrets and credentials (ELICIT-15): passwords, API keys, tokens, private
#: keys, recovery codes, payment credentials. Case-insensitive, camelCase and snake_case alike.
_SECRET_WORDS = re.compile(
    r"pass(?:word|phrase|code)|passwd|secret|api[ _-]?key|access[ _-]?key|private[ _-]?key"
    r"|(?:access|refresh|auth|bearer|api|session)?[ _-]?token(?![a-z])|recovery[ _-]?code"
    r"|backup[ _-]?code|seed[ _-]?phrase|mnemonic|card[ _-]?number|credit[ _-]?card"
    r"|\bcv[cv]2?\b|\bpin\b|\biban\b|\botp\b|\b2fa\b",
    re.IGNORECASE,
)
#: Query parameters that carry credentials or pre-authenticated access (ELICIT-30).
_CREDENTIAL_PARAMS = re.compile(
    r"(?:access_|refresh_|id_|auth_|api_)?token|password|passwd|pwd|secret|client_secret"
    r"|api_?key|access_?key|session(?:_?id)?|sid|sig|signature|x-amz-signature|auth",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"[^@\s/?&=]+@[^@\s/?&=]+\.[A-Za-z]{2,}")
_LINK = re.compile(r"\b(?:https?://|www\.)\S+", re.IGNORECASE)
_DEVELOPMENT_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


def names_a_secret(text: Any) -> bool:
    """True when a form field's name or title names a secret or credential (ELICIT-15)."""
    return isinstance(text, str) and bool(_SECRET_WORDS.search(text))


def url_credentials(url: Any) -> List[str]:
    """What in a URL looks like credentials, personal data or pre-authenticated access (ELICIT-30).

    A password in the URL's user part is certain; a user name, a query parameter named like a
    token or a signature, and an email address anywhere are guesses.
    """
    if not isinstance(url, str):
        return []
    try:
        parts = urlsplit(url)
        password, user = parts.password, parts.username
    except ValueError:
        return []
    found = []
    if password is not None:
        found.append("a password in the URL's user part")
    elif user is not None:
        found.append(f"a user name {user!r} before '@'")
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if _CREDENTIAL_PARAMS.fullmatch(name):
            found.append(f"the query parameter {name!r}")
        elif _EMAIL.search(value):
            found.append(f"an email address in the query parameter {name!r}")
    if _EMAIL.search(unquote(parts.path)):
        found.append("an email address in the path")
    return found


def is_development_url(url: Any) -> bool:
    """True for a URL on this machine (localhost, a loopback address): development (ELICIT-31)."""
    if not isinstance(url, str):
        return False
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    return host in _DEVELOPMENT_HOSTS or host.endswith(".localhost") or host.startswith("127.")


def has_link(text: Any) -> bool:
    """True when text holds a URL meant to be followed: ``http(s)://...`` or ``www....``."""
    return isinstance(text, str) and bool(_LINK.search(text))
