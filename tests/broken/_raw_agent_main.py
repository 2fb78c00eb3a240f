"""The raw agent, unbent: the clean baseline of the broken agents (``python _raw_agent_main.py``)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _raw import RawAgent  # noqa: E402

if __name__ == "__main__":
    RawAgent().run()
