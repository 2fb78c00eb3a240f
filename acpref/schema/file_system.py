"""Client file system methods: ``fs/read_text_file`` and ``fs/write_text_file``.

Spec: file-system.mdx; clauses FS-01 .. FS-08, OVERVIEW-06, OVERVIEW-07. Paths are absolute;
``line`` is 1-based. Each method is available only when the client advertised it.
"""

import attrs

from ._base import Meta, Unset, field
from .identifiers import SessionId

__all__ = [
    "WriteTextFileRequest",
    "ReadTextFileRequest",
    "WriteTextFileResponse",
    "ReadTextFileResponse",
]


@attrs.frozen(kw_only=True)
class WriteTextFileRequest:
    """Params of `fs/write_text_file`: write a whole text file in the client's file system.

    Spec: file-system.mdx
    """

    session_id: SessionId = field(required=True)
    path: str = field(required=True)
    content: str = field(required=True)
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class ReadTextFileRequest:
    """Params of `fs/read_text_file`: read a text file, optionally from a 1-based line and a line limit.

    Spec: file-system.mdx
    """

    session_id: SessionId = field(required=True)
    path: str = field(required=True)
    # spec SCHEMA-21: line and limit lost default-on-error: a wrong-typed value is -32602.
    line: int | None | Unset = field(fmt="uint32")
    limit: int | None | Unset = field(fmt="uint32")
    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class WriteTextFileResponse:
    """Result of `fs/write_text_file` (an object; the docs example shows null).

    Spec: file-system.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)


@attrs.frozen(kw_only=True)
class ReadTextFileResponse:
    """Result of `fs/read_text_file`: the text read.

    Spec: file-system.mdx
    """

    content: str = field(required=True)
    meta: Meta | Unset = field(default_on_error=True)
