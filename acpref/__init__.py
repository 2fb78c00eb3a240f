"""acpref: the readable reference implementation of the Agent Client Protocol (ACP) v1."""

__version__ = "0.1.0"
