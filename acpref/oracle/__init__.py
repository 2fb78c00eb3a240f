"""The oracle: judge ACP traffic, both directions, clause by clause.

``validate(transcript)`` returns a ``Report`` of every finding: the clause (from the register of
``spec_notes/clauses.tsv``), its level, who broke it, the index of the offending message and a
one-line explanation. Transcripts are recorded by ``TranscriptRecorder`` (any acpref connection
can write one; ``acpref client --record`` and ``acpref proxy --record`` do).

The oracle judges with the same rules (``acpref._rules``) that the agent and client sides obey
live, and with the strict mode of the same codec.
"""

from .._rules import Finding, Party
from ._transcript import FORMAT, Record, TranscriptRecorder, read_transcript
from ._validate import Report, Validator, validate

__all__ = [
    "FORMAT",
    "Finding",
    "Party",
    "Record",
    "Report",
    "TranscriptRecorder",
    "Validator",
    "read_transcript",
    "validate",
]
