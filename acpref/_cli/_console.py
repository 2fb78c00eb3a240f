"""The terminal of ``acpref client``: where each kind of output goes, line input, log lines.

* **Where output goes.** Interactively, everything is on stdout. With ``-p``, stdout carries the
  answer (the agent's message text) and nothing else; the banner, tool calls, plans, notes and
  questions go to stderr. With ``--json``, stdout carries the JSON lines and the rest goes to
  stderr. Every piece of the peer's text is made inert (``acpref._tools.terminal.inert``) by the
  ``Renderer`` before it is written.
* **A closed stdout** (``| head``) is noticed on the first failed write, on whatever thread
  writes; the main thread then ends the command quietly (status 141, ``_status``).
* **Output while the user types.** Updates arrive at any time (the agent's command list right
  after the session starts, typically while the prompt is already shown): the prompt line is
  cleared (or, when it spans several rows of the terminal, left above), the output written, and
  the prompt redrawn with what was typed so far.
* **Log lines.** Warnings of the library (a dropped malformed notification, a broken rule) are
  shown on stderr; the same warning repeated is shown three times, then counted at 10, 100,
  1,000... and summed up when the command ends.
"""

from __future__ import annotations

import logging
import os
import queue
import select
import sys
import threading
import unicodedata
from typing import Any, Callable, Dict, Optional

from .._tools.terminal import Renderer, inert
from ..client import DEFAULT_MAX_KEPT
from . import _status


class StdoutClosed(Exception):
    """stdout was closed by its reader."""


class Question:
    """A question a connection thread needs the user to answer on the main thread."""

    def __init__(self, ask: Callable[[], Any], cancelled: threading.Event) -> None:
        self.ask = ask
        self.cancelled = cancelled
        self.answer: Any = None
        self.done = threading.Event()


class Console:
    """The terminal: rendered output, and line input that gives up when a question is moot.

    ``mode`` is ``"interactive"``, ``"one-shot"`` (``-p``) or ``"json"``; ``max_kept`` bounds
    what a stream shown holds back (``Renderer``).
    """

    def __init__(self, mode: str, max_kept: int = DEFAULT_MAX_KEPT) -> None:
        self.mode = mode
        self.stdout_gone = threading.Event()
        self._lock = threading.RLock()
        #: The prompt shown while the main thread waits in ``input()`` (see ``_screen``).
        self._prompt: Optional[str] = None
        self._drawn = False
        if mode == "json":
            self.render = Renderer(lambda text: None, notes=self._err, max_kept=max_kept)
        elif mode == "one-shot":
            shared = _same_terminal()
            self.render = Renderer(self._out, notes=self._err, shared=shared, max_kept=max_kept)
        else:
            self.render = Renderer(self._screen, max_kept=max_kept)
        self.questions: "queue.Queue[Question]" = queue.Queue()
        #: Ctrl-C presses during a turn (counted by the SIGINT handler, see ``_App.turn``),
        #: and how many of them the turn loop has acted on: a question gives up on a new one.
        self.interrupts = 0
        self.acted = 0

    # -- Writing ------------------------------------------------------------------------------

    def _out(self, text: str) -> None:
        """Write to stdout; a closed stdout is remembered, never raised on a reader thread."""
        if self.stdout_gone.is_set():
            return
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            self.stdout_gone.set()
            _status.stdout_closed()

    @staticmethod
    def _err(text: str) -> None:
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except (BrokenPipeError, ValueError):
            pass

    def _screen(self, text: str) -> None:
        """Interactive output: around a prompt the user may be typing at, redraw it."""
        with self._lock:
            prompt = self._prompt
            if prompt is None:
                self._out(text)
                return
            typed = _line_buffer()
            if self._drawn:
                self._out(_away_from_prompt(prompt + typed))
                self._drawn = False
            self._out(text)
            if text.endswith("\n"):
                self._out(prompt + typed)  # the prompt again, with what was typed so far
                self._drawn = True

    def write_json(self, text: str) -> None:
        self._out(text + "\n")

    def say(self, text: str) -> None:
        """A line for the user (inert): stdout interactively, else stderr."""
        self.render.line(text)

    def prompt_input(self, prompt: str) -> str:
        """``input(prompt)``, with output arriving meanwhile written above the prompt."""
        self.render.end()
        with self._lock:
            self._prompt, self._drawn = prompt, True
        try:
            return input(prompt)
        finally:
            with self._lock:
                self._prompt = None

    # -- Reading ------------------------------------------------------------------------------

    def read_line(self, prompt: str, cancelled: Optional[threading.Event] = None) -> Optional[str]:
        """A line typed by the user; None at end of input or once ``cancelled`` is set."""
        self.render.end()
        prompt = inert(prompt)  # it may quote the agent (a field's title)
        self._err(prompt) if self.mode != "interactive" else self._out(prompt)
        if not sys.stdin.isatty():
            line = sys.stdin.readline()
            return line.rstrip("\n") if line else None
        while (cancelled is None or not cancelled.is_set()) and self.interrupts == self.acted:
            ready, _, _ = select.select([sys.stdin], [], [], 0.1)
            if ready:
                line = sys.stdin.readline()
                return line.rstrip("\n") if line else None
        self.say("(no longer needed)")
        return None

    def ask_on_main(self, ask: Callable[[], Any], cancelled: threading.Event) -> Any:
        """From a connection thread: have the main thread run ``ask``; None if cancelled first."""
        question = Question(ask, cancelled)
        self.questions.put(question)
        while not question.done.wait(0.1):
            if cancelled.is_set():
                return None
        return question.answer


def _same_terminal() -> bool:
    """stdout and stderr are one terminal (the answer and the notes share a screen)."""
    try:
        if not (sys.stdout.isatty() and sys.stderr.isatty()):
            return False
        return os.fstat(sys.stdout.fileno()).st_rdev == os.fstat(sys.stderr.fileno()).st_rdev
    except (OSError, ValueError):
        return False


def _away_from_prompt(shown: str) -> str:
    """What to write, at the end of the prompt line ``shown``, before output goes above it.

    A prompt line that fits on one row of the terminal is cleared with spaces (no escape
    sequence: any terminal), and the output takes its row. A longer one (a long agent title, a
    long line typed) spans several rows, or is scrolled sideways by readline: ``\r`` reaches
    only its last row, and clearing it without moving the cursor up (an escape sequence) would
    leave the rows above as a fragment, and spaces beyond the row's width would wrap into a
    blank row. So the output starts on the next row instead, the prompt left whole above it.
    Either way the prompt is drawn again below the output (``Console._screen``).
    """
    width = _display_width(shown)
    if width < _columns():
        return "\r" + " " * width + "\r"
    return "\n"


def _columns() -> int:
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns or 80
    except (OSError, ValueError):
        return 80


def _display_width(text: str) -> int:
    """Columns ``text`` takes on a terminal: wide (East Asian) characters take two."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _line_buffer() -> str:
    try:
        import readline
    except ImportError:  # pragma: no cover - no readline on this platform
        return ""
    return readline.get_line_buffer()


class LogSummary(logging.Handler):
    """Warnings on stderr, the same one repeated shown 3 times, then at 10, 100, 1,000..."""

    SHOWN = 3

    def __init__(self, write: Callable[[str], None]) -> None:
        super().__init__(logging.WARNING)
        self._write = write
        self._counts: Dict[str, int] = {}
        self._examples: Dict[str, str] = {}

    def emit(self, record: logging.LogRecord) -> None:
        # The same warning: the same message template (the values in it differ).
        key = f"{record.name}:{record.msg}"
        with self.lock or threading.Lock():
            count = self._counts[key] = self._counts.get(key, 0) + 1
            if count <= self.SHOWN:
                text = inert(record.getMessage())
                self._examples[key] = text
                self._write(f"acpref client: {record.levelname.lower()}: {text}\n")
            elif _power_of_ten(count):
                self._write(f"acpref client: ... {count:,} warnings like: {self._examples[key]}\n")

    def summary(self) -> None:
        """At the end: the count of each warning shown only in part."""
        for key, count in self._counts.items():
            if count > self.SHOWN and not _power_of_ten(count):
                self._write(
                    f"acpref client: {count:,} warnings in all like: {self._examples[key]}\n"
                )


def _power_of_ten(n: int) -> bool:
    while n >= 10 and n % 10 == 0:
        n //= 10
    return n == 1
