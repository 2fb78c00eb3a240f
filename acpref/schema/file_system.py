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
    """The session ID for this request."""
    path: str = field(required=True)
    """Absolute path to the file to write."""
    content: str = field(required=True)
    """The text content to write to the file."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ReadTextFileRequest:
    """Params of `fs/read_text_file`: a text file, optionally from a 1-based line, up to a limit.

    Spec: file-system.mdx
    """

    session_id: SessionId = field(required=True)
    """The session ID for this request."""
    path: str = field(required=True)
    """Absolute path to the file to read."""
    # spec SCHEMA-21: line and limit lost default-on-error: a wrong-typed value is -32602.
    line: int | None | Unset = field(fmt="uint32")
    """Line number to start reading from (1-based)."""
    limit: int | None | Unset = field(fmt="uint32")
    """Maximum number of lines to read."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class WriteTextFileResponse:
    """Result of `fs/write_text_file` (an object; the docs example shows null).

    Spec: file-system.mdx
    """

    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ReadTextFileResponse:
    """Result of `fs/read_text_file`: the text read.

    Spec: file-system.mdx
    """

    content: str = field(required=True)
    """Content payload returned by this response."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """
