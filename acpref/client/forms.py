"""Form-mode elicitation: the fields of a requested schema, typed input, and validation.

Spec: elicitation.mdx (Form mode, Responses). The functions live in ``acpref._forms``, below both
sides, so that an agent checking an answer does not load the client; this is their public name.
"""

from .._forms import Field, fields_of, parse, validate

__all__ = ["Field", "fields_of", "parse", "validate"]
