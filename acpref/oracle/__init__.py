"""The oracle: judge ACP traffic, both directions, clause by clause.

``validate(transcript)`` returns a ``Report`` of every finding: the clause (from the register of
``spec_notes/clauses.tsv``), its level, who broke it, the index of the offending message and a
one-line explanation; MUST-level findings are ``violations``, SHOULD-level ones ``warnings``.
``Validator`` does the same incrementally (the proxy feeds it as traffic flows). ``diff``
compares two transcripts of one scenario modulo ids and timestamps.

Transcripts are recorded by ``TranscriptRecorder`` (or ``acpref.testing.RecordingStream``, which
records outgoing lines before they are written, so that a fast answer is never recorded before
its request); ``acpref client --record`` and ``acpref proxy --record`` write them.

The oracle judges with the same rules (``acpref._core``) that the agent and client sides obey
live, and with the strict mode of the same codec. Layers L0-L2 only: no threads, no I/O beyond
reading a transcript.
"""

from .._core import Finding, Party
from ._diff import Divergence, diff, normalize
from ._transcript import FORMAT, Record, TranscriptRecorder, dumps, read_transcript
from ._validate import Report, Validator, format_finding, validate

__all__ = [
    "FORMAT",
    "Divergence",
    "Finding",
    "Party",
    "Record",
    "Report",
    "TranscriptRecorder",
    "Validator",
    "diff",
    "dumps",
    "format_finding",
    "normalize",
    "read_transcript",
    "validate",
]
