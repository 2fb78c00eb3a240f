"""``@path`` mentions in a prompt line of ``acpref client``: the files they name, as content blocks.

Spec: prompt-turn.mdx (1. User Message), content.mdx (Embedded Resource, Resource Link, Image,
Audio); clauses PROMPT-03, PROMPT-04, PROMPT-05, CONTENT-05. Decision ``mention-blocks``
(spec_notes/client.md).

A word of the line that starts with ``@`` and names a regular file below the session's roots
(relative to its cwd) brings that file along. The line itself is sent unchanged as the first
text block; each file mentioned becomes one more block, chosen from what the agent advertised in
``promptCapabilities``:

* an image (``image/*``) as an image block when ``image`` is true, an audio file (``audio/*``) as
  an audio block when ``audio`` is true;
* any other file as an embedded ``resource`` (its text, or a base64 blob when it is not UTF-8)
  when ``embeddedContext`` is true;
* otherwise, or when the file is larger than ``MAX_INLINE_BYTES``, a ``resource_link`` (a
  baseline block every agent takes).

A word that names no such file stays text and brings nothing; when it looks like a path (it has
a ``/`` or a ``.``: ``@missing.txt``, ``@../outside.txt``) the user is told, so that a typo or a
file outside the session's folders is never left out silently. ``@someone`` is just a word.
"""

from __future__ import annotations

import base64
import mimetypes
import os
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence, Tuple

from .. import schema as s
from ..client.roots import Roots

__all__ = ["MAX_INLINE_BYTES", "prompt_blocks", "mention_help"]

#: Files larger than this are linked, never copied into the prompt.
MAX_INLINE_BYTES = 1 << 20

_TRAILING = ".,;:!?)]}\"'"


def _looks_like_a_path(word: str) -> bool:
    candidate = word[1:].rstrip(_TRAILING)
    return len(word) >= 2 and word.startswith("@") and ("/" in candidate or "." in candidate)


def _why_not(word: str, cwd: str, roots: Roots) -> str:
    """Why an ``@word`` that looks like a path brings nothing."""
    real = os.path.realpath(os.path.join(cwd, os.path.expanduser(word[1:].rstrip(_TRAILING))))
    if not os.path.exists(real):
        return f"{word}: no such file; sent as plain text"
    if not roots.contains(real):
        return f"{word}: outside the session's folders; not sent (sent as plain text)"
    return f"{word}: not a regular file; sent as plain text"


def _mentioned(word: str, cwd: str, roots: Roots) -> Optional[str]:
    """The real path of the file an ``@word`` names, if it is a file below the roots."""
    if len(word) < 2 or not word.startswith("@"):
        return None
    for candidate in (word[1:], word[1:].rstrip(_TRAILING)):
        if not candidate:
            continue
        real = os.path.realpath(os.path.join(cwd, os.path.expanduser(candidate)))
        if roots.contains(real) and os.path.isfile(real):
            return real
    return None


def prompt_blocks(
    text: str, cwd: str, root_dirs: Sequence[str], supports: Callable[[str], bool]
) -> Tuple[List[Any], List[str]]:
    """The content blocks of a prompt line, and notes for the user about the mentions.

    ``supports(gate)`` says whether the agent advertised a dotted capability
    (``ClientSideConnection.supports``).
    """
    roots = Roots(root_dirs)
    blocks: List[Any] = [s.TextContent(text=text)]  # the line as typed, mentions included
    notes: List[str] = []
    seen = set()
    for word in text.split():
        path = _mentioned(word, cwd, roots)
        if path is None and _looks_like_a_path(word):
            notes.append(_why_not(word, cwd, roots))
        if path is None or path in seen:
            continue
        seen.add(path)
        try:
            block, note = _block(path, supports)
        except OSError as exc:
            notes.append(f"{word}: not readable ({exc.strerror or exc}); left as text")
            continue
        blocks.append(block)
        notes.append(note)
    return blocks, notes


def _block(path: str, supports: Callable[[str], bool]) -> Tuple[Any, str]:
    uri = Path(path).as_uri()
    name = os.path.basename(path)
    mime, _ = mimetypes.guess_type(path)
    size = os.path.getsize(path)
    kind = (mime or "").split("/", 1)[0]

    def link(why: str) -> Tuple[Any, str]:
        # spec PROMPT-05: a resource_link (baseline, INIT-15) refers to the file by URI.
        block = s.ResourceLink(uri=uri, name=name, mime_type=mime or s.UNSET, size=size)
        return block, f"@{name}: sent as a link ({why})"

    if size > MAX_INLINE_BYTES:
        # spec-gap mention-blocks: a large file is linked, never copied into the prompt.
        return link(f"larger than {MAX_INLINE_BYTES} bytes")
    if kind in ("image", "audio"):
        # spec PROMPT-03, PROMPT-04: an image or audio block only when the agent takes them.
        # spec-gap mention-blocks: else the file is linked and the user told so (not embedded
        # as a blob resource, which would hand the agent media it said it cannot take).
        if not supports(f"promptCapabilities.{kind}"):
            return link(f"the agent takes no {kind}")
        data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
        assert mime is not None
        if kind == "image":
            return s.ImageContent(data=data, mime_type=mime, uri=uri), f"@{name}: sent as an image"
        return s.AudioContent(data=data, mime_type=mime), f"@{name}: sent as audio"
    if not supports("promptCapabilities.embeddedContext"):
        # spec PROMPT-05: without embeddedContext, referenced context goes as resource_link.
        return link("the agent takes no embedded context")
    raw = Path(path).read_bytes()
    try:
        contents: Any = s.TextResourceContents(
            uri=uri, text=raw.decode("utf-8"), mime_type=mime or s.UNSET
        )
    except UnicodeDecodeError:
        blob = base64.b64encode(raw).decode("ascii")
        contents = s.BlobResourceContents(uri=uri, blob=blob, mime_type=mime or s.UNSET)
    # spec CONTENT-05, PROMPT-05: embedded resources are the preferred way to pass @-mentioned
    # context when the agent supports them.
    return s.EmbeddedResource(resource=contents), f"@{name}: embedded ({len(raw)} bytes)"


def mention_help(supports: Callable[[str], bool]) -> str:
    """One line for ``/help``: what ``@path`` becomes with this agent (spec PROMPT-04)."""
    files = "embedded" if supports("promptCapabilities.embeddedContext") else "sent as links"
    kinds = [k for k in ("image", "audio") if supports(f"promptCapabilities.{k}")]
    media = f"; {' and '.join(kinds)} files go as such" if kinds else ""
    missing = [k for k in ("image", "audio") if k not in kinds]
    off = f"; this agent takes no {' or '.join(missing)} (linked instead)" if missing else ""
    return f"@PATH in a prompt brings a file of the session along: {files}{media}{off}"
