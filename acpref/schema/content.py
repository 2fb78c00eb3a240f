"""Content blocks: text, images, audio and resources, as in MCP.

Spec: content.mdx; clauses CONTENT-01 .. CONTENT-09, SCHEMA-16. Content blocks appear in prompts,
in streamed message chunks and in tool call content. Which of them a prompt may carry is decided
by the agent's ``promptCapabilities`` (text and resource links are always allowed, INIT-15).
"""

from typing import ClassVar, List, Union

import attrs

from ._base import (
    Meta,
    Unset,
    WireEnum,
    field,
    keyed_union,
    tagged_union,
)

__all__ = [
    "Role",
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "TextResourceContents",
    "EmbeddedResourceResource",
    "EmbeddedResource",
    "ImageContent",
    "ResourceLink",
    "TextContent",
    "ContentBlock",
]


class Role(WireEnum):
    """Who a piece of content is for: the user or the assistant.

    Spec: content.mdx
    """

    ASSISTANT = "assistant"
    USER = "user"


@attrs.frozen(kw_only=True)
class Annotations:
    """Display hints for a content block: audience, last modification, priority.

    Spec: content.mdx
    """

    audience: List[Role] | None | Unset = field(default_on_error=True, skip_invalid_items=True)
    """Intended recipients for this content, such as the user or assistant."""
    last_modified: str | None | Unset = field(default_on_error=True)
    """Timestamp indicating when the underlying resource was last modified."""
    priority: float | None | Unset = field(default_on_error=True)
    """Relative importance of this content when clients choose what to surface."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class AudioContent:
    """An audio content block, base64 data with its MIME type.

    Spec: content.mdx
    """

    type: ClassVar[str] = "audio"

    annotations: Annotations | None | Unset = field(default_on_error=True)
    """Optional annotations that help clients decide how to display or route this content."""
    # spec CONTENT-06: base64 data and its MIME type, both required.
    data: str = field(required=True)
    """Base64-encoded media payload."""
    mime_type: str = field(required=True)
    """MIME type describing the encoded media payload."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class BlobResourceContents:
    """Embedded resource contents given as base64 data.

    Spec: content.mdx
    """

    blob: str = field(required=True)
    """Base64-encoded bytes for a binary resource payload."""
    mime_type: str | None | Unset = field(default_on_error=True)
    """MIME type describing the encoded media payload."""
    uri: str = field(required=True)
    """URI associated with this resource or media payload."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class TextResourceContents:
    """Embedded resource contents given as text.

    Spec: content.mdx
    """

    mime_type: str | None | Unset = field(default_on_error=True)
    """MIME type describing the encoded media payload."""
    text: str = field(required=True)
    """Text payload carried by this content block."""
    uri: str = field(required=True)
    """URI associated with this resource or media payload."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


#: The contents of an embedded resource: text or blob, told apart by which key is present.
#: Spec: content.mdx (Embedded Resource).
# spec CONTENT-07: text contents {uri, text} or blob contents {uri, blob}; neither is an error.
EmbeddedResourceResource = Union[TextResourceContents, BlobResourceContents]
keyed_union(
    EmbeddedResourceResource, ("text", TextResourceContents), ("blob", BlobResourceContents)
)


@attrs.frozen(kw_only=True)
class EmbeddedResource:
    """A content block that carries a resource's contents inline.

    Spec: content.mdx
    """

    type: ClassVar[str] = "resource"

    annotations: Annotations | None | Unset = field(default_on_error=True)
    """Optional annotations that help clients decide how to display or route this content."""
    resource: EmbeddedResourceResource = field(required=True)
    """Embedded resource payload, either text or binary data."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ImageContent:
    """An image content block, base64 data with its MIME type.

    Spec: content.mdx
    """

    type: ClassVar[str] = "image"

    # spec SCHEMA-16: every content block may carry annotations (audience, lastModified,
    # priority).
    annotations: Annotations | None | Unset = field(default_on_error=True)
    """Optional annotations that help clients decide how to display or route this content."""
    # spec CONTENT-06: base64 data and its MIME type, both required; uri optional.
    data: str = field(required=True)
    """Base64-encoded media payload."""
    mime_type: str = field(required=True)
    """MIME type describing the encoded media payload."""
    uri: str | None | Unset = field(default_on_error=True)
    """URI associated with this resource or media payload."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class ResourceLink:
    """A content block that points at a resource by URI.

    Spec: content.mdx
    """

    type: ClassVar[str] = "resource_link"

    annotations: Annotations | None | Unset = field(default_on_error=True)
    """Optional annotations that help clients decide how to display or route this content."""
    description: str | None | Unset = field(default_on_error=True)
    """Optional human-readable details shown with this protocol object."""
    mime_type: str | None | Unset = field(default_on_error=True)
    """MIME type describing the encoded media payload."""
    # spec CONTENT-08: uri and name required; mimeType, title, description and size optional.
    name: str = field(required=True)
    """Human-readable name shown for this protocol object."""
    size: int | None | Unset = field(default_on_error=True, fmt="int64")
    """Optional size of the linked resource in bytes, if known."""
    title: str | None | Unset = field(default_on_error=True)
    """Optional display title for end-user UI."""
    uri: str = field(required=True)
    """URI associated with this resource or media payload."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


@attrs.frozen(kw_only=True)
class TextContent:
    """A text content block.

    Spec: content.mdx
    """

    type: ClassVar[str] = "text"

    annotations: Annotations | None | Unset = field(default_on_error=True)
    """Optional annotations that help clients decide how to display or route this content."""
    text: str = field(required=True)
    """Text payload carried by this content block."""
    meta: Meta | Unset = field(default_on_error=True)
    """The _meta property is reserved by ACP to allow clients and agents to attach additional
    metadata to their interactions. Implementations MUST NOT make assumptions about values at these
    keys.
    """


#: A displayable piece of content, tagged by ``type`` (the MCP content block).
#: Spec: content.mdx; CONTENT-01.
# spec CONTENT-01: the five block types, tagged by "type"; any other type is invalid.
ContentBlock = Union[TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource]
tagged_union(ContentBlock, tag="type")
