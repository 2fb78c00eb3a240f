"""The public face of the JSON-RPC connection: ``acpref.connection.Connection`` and its parts.

The connection itself is the threaded shell's (``acpref._shell.connection``; the shell's reading
order is the docstring of ``acpref._shell``). This module keeps the documented import path.
"""

from ._shell.calls import Handler, Observer, PendingRequest, Recorder, RequestContext
from ._shell.connection import (
    DEFAULT_MAX_HELD_BYTES,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_LINE_BYTES,
    Connection,
)

__all__ = [
    "Connection",
    "RequestContext",
    "PendingRequest",
    "Handler",
    "Recorder",
    "Observer",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_ITEMS",
    "DEFAULT_MAX_HELD_BYTES",
]
