"""Custom methods: the params and results of ``_``-prefixed requests and notifications.

Spec: extensibility.mdx (Extension Methods); clauses EXT-05 .. EXT-10.

The schema leaves their shape open (``{}``): any JSON value. They are kept raw, never decoded.
Custom *data* on spec types travels in ``_meta`` (every model's ``meta`` field), see ``_base``.
"""

from ._base import JsonValue

__all__ = ["ExtRequest", "ExtResponse", "ExtNotification"]

#: Params of a custom ``_``-prefixed request: any JSON value. Spec: extensibility.mdx.
ExtRequest = JsonValue
#: Result of a custom ``_``-prefixed request: any JSON value. Spec: extensibility.mdx.
ExtResponse = JsonValue
#: Params of a custom ``_``-prefixed notification: any JSON value. Spec: extensibility.mdx.
ExtNotification = JsonValue
