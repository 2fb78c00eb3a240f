"""The threads of a connection: who reads the stream, and who runs the peer's requests.

Spec: none directly; this is how acpref meets RPC-07 (requests in both directions interleave,
matched by id) with plain threads and blocking pipes. Measurements: benchmarks/README.md.

The rule the design rests on: **a thread that needs something from the stream reads it itself.**
Reading is a *role* that one thread holds at a time:

* A **caller** waiting for the response to its own request takes the role (callers go first)
  and reads until that response comes, dispatching whatever else it meets on the way.
* When no caller waits, one of the connection's own **host** threads keeps watch: it holds the
  role and reads. When it reads a request, it passes the role to an idle host (starting one if
  needed, within the bound) and runs the request itself: the *leader/follower* pattern.
* A caller that meets a request while reading gives it to a host to run.
* Notifications run on the thread that reads them, at once, so they run one after another in
  wire order, and every notification received before a response has been handled by the time
  that response's caller gets it. (When a notification handler calls the peer, the responses
  its nested wait reads for *other* callers are held back until the handler returns.)

Why not one dedicated reader thread that hands everything on (DESIGN.md's first sketch)? A
hand-off between threads costs a wake-up and a GIL transfer, more than a whole request/response
exchange between two processes (benchmarks/README.md, "The wire alone"). A response read by its
own caller, and a request run by the host that read it, need no hand-off at all.

What this guarantees, and what it asks:

* One thread reads at a time, so messages are handled in wire order.
* A request never runs on a thread that holds the reading role, so a request handler may call
  the peer and wait for it (a prompt handler asking for permission).
* A notification handler may call the peer too: its thread holds the role, so its wait reads,
  nested, until the answer comes. It must not block on anything *else*: nothing is read meanwhile.
* At most ``max_handlers`` requests run at once; more wait in a queue while reading goes on (so
  answers to nested calls are still read); past ``max_queued`` waiting, a request is refused
  (the connection answers -32800, RPC-15). Idle hosts beyond the one that keeps watch exit after
  ``idle_timeout``, so the thread count comes back down after a burst.
* For a short ``grace`` after the last caller got its answer, no host starts watching: a thread
  that calls in a loop then reads its own answers without ever waking a host. Nothing is lost
  meanwhile: unread bytes wait in the pipe.

What must not live here: anything about JSON-RPC or ACP. The connection gives this module a
``read_step`` that reads and dispatches one item, and the requests to run.
"""

from __future__ import annotations

import collections
import itertools
import logging
import threading
import time
from typing import Callable, Deque, Dict, List, Optional

__all__ = ["Crew", "Flag", "Waiter", "READ_MORE", "READ_INTERRUPTED", "READ_EOF"]

log = logging.getLogger("acpref.connection")

#: What ``read_step`` returns.
READ_MORE = "more"
READ_INTERRUPTED = "interrupted"
READ_EOF = "eof"

_DUTY = object()  # what a host is told to do when it should take the reading role


class Flag:
    """A ``threading.Event`` that costs one bool until somebody waits on it.

    Every request has two (the handler's ``cancelled``, the caller's ``Waiter.signal``) and
    almost none is ever waited on: building a real ``Event`` (a ``Condition`` and its locks) for
    each was a fifth of the CPU time of a request's round trip. The event is built by the first
    ``wait``. Race-free without a lock on ``set``: ``set`` writes the bool before it looks for
    the event, ``wait`` builds the event before it looks at the bool, so one of them sees the
    other.
    """

    __slots__ = ("_flag", "_event")
    _building = threading.Lock()

    def __init__(self) -> None:
        self._flag = False
        self._event: Optional[threading.Event] = None

    def is_set(self) -> bool:
        return self._flag

    def set(self) -> None:
        self._flag = True
        event = self._event
        if event is not None:
            event.set()

    def clear(self) -> None:
        self._flag = False
        event = self._event
        if event is not None:
            event.clear()

    def wait(self, timeout: Optional[float] = None) -> bool:
        if self._flag:
            return True
        event = self._event
        if event is None:
            with Flag._building:
                if self._event is None:
                    self._event = threading.Event()
                event = self._event
            if self._flag:  # set before the event existed
                return True
        return event.wait(timeout)


class Waiter:
    """A caller waiting for its response. ``signal`` is set when it is done or offered the role."""

    __slots__ = ("done", "signal")

    def __init__(self) -> None:
        self.done = False
        self.signal = Flag()

    def finish(self) -> None:
        self.done = True
        self.signal.set()


class Crew:
    """The reading role and the host threads of one connection."""

    def __init__(
        self,
        name: str,
        *,
        read_step: Callable[[], str],
        interrupt: Optional[Callable[[], None]],
        max_handlers: int,
        max_queued: int,
        idle_timeout: float = 2.0,
        grace: float = 0.002,
    ) -> None:
        self._name = name
        self._read_step = read_step
        self._interrupt = interrupt
        self._max_handlers = max_handlers
        self._max_queued = max_queued
        self._idle_timeout = idle_timeout
        self._grace = grace

        self._cv = threading.Condition()  # guards everything below
        self._holder: Optional[threading.Thread] = None  # who reads now
        self._holder_is_watch = False  # the holder is a host keeping watch (interruptible)
        self._holder_deadline: Optional[float] = None  # a reading caller's own deadline
        self._depth: Dict[threading.Thread, int] = {}  # nested reading (a notification's call)
        # While a notification handler's call reads (nested), the waiters it reads for and the
        # other callers' answers it met, held back until the handler returns (see finish).
        self._nested: List[Waiter] = []
        self._held: Optional[List[Waiter]] = None
        self._callers: List[Waiter] = []  # callers waiting, in arrival order
        self._callers_left = 0.0  # when the last caller stopped waiting
        self._role_freed = 0.0  # when a watching host left the role to run a request
        # While callers read, idle hosts nap this long between looks: a caller that waited less
        # does not wake them when it leaves (a thread calling in a loop costs no wake-ups).
        self._nap = 10 * grace
        self._hosts: List[threading.Thread] = []
        self._idle_hosts = 0
        self._running = 0  # requests being run by hosts
        self._queue: Deque[Callable[[], None]] = collections.deque()
        self._inline: Dict[threading.Thread, Callable[[], None]] = {}  # leader/follower hand-over
        self._counter = itertools.count(1)
        self._eof = False
        self._stopped = False

    # -- starting and stopping -------------------------------------------------------------------

    def start(self) -> None:
        with self._cv:
            self._spawn_host()

    def stop(self) -> None:
        """No more reading or running (close): wake every thread so it can leave."""
        with self._cv:
            self._stopped = True
            self._queue.clear()
            self._hand_over_held()
            for waiter in self._callers:
                waiter.signal.set()
            self._cv.notify_all()

    def join(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self._cv:
            hosts = list(self._hosts)
        for thread in hosts:
            if thread is not threading.current_thread():
                thread.join(max(0.0, deadline - time.monotonic()))

    def read_timeout(self) -> Optional[float]:
        """How long the current read may block: until the reading caller's deadline, if any."""
        deadline = self._holder_deadline
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    def owns(self, thread: threading.Thread) -> bool:
        with self._cv:
            return thread in self._hosts

    @property
    def running(self) -> int:
        """Requests being run by hosts right now."""
        with self._cv:
            return self._running

    def end_of_input(self) -> None:
        """Nothing more will be read: stop keeping watch, release every waiting caller."""
        with self._cv:
            self._eof = True
            self._hand_over_held()
            for waiter in self._callers:
                waiter.signal.set()
            self._cv.notify_all()

    # -- callers ---------------------------------------------------------------------------------

    def wait(self, waiter: Waiter, deadline: Optional[float]) -> bool:
        """Wait until ``waiter`` is done, reading meanwhile whenever the role is free.

        Returns False on timeout. A thread that already holds the role (a notification handler
        that called the peer) reads, nested, until it is done.
        """
        me = threading.current_thread()
        with self._cv:
            nested = self._holder is me
        if nested:
            return self._read_nested(me, waiter, deadline)
        with self._cv:
            self._callers.append(waiter)
        since = time.monotonic()
        try:
            while True:
                with self._cv:
                    waiter.signal.clear()
                    if waiter.done or self._eof or self._stopped:
                        return waiter.done or self._eof or self._stopped
                    if self._holder is None:
                        self._take(me, watch=False)
                        self._holder_deadline = deadline
                        take = True
                    else:
                        take = False
                        if self._holder_is_watch and self._interrupt is not None:
                            self._interrupt()  # ask the watching host to give way
                if take:
                    try:
                        while not waiter.done:
                            if self._read_step() == READ_EOF:
                                break
                            if deadline is not None and time.monotonic() >= deadline:
                                return waiter.done
                    finally:
                        self._release()
                    return True
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return waiter.done
                waiter.signal.wait(remaining)
        finally:
            with self._cv:
                self._callers.remove(waiter)
                if not self._callers:
                    self._callers_left = now = time.monotonic()
                    if now - since > self._nap:
                        self._cv.notify()  # a host may keep watch (after the grace)

    def _read_nested(self, me: threading.Thread, waiter: Waiter, deadline: Optional[float]) -> bool:
        with self._cv:
            self._depth[me] = self._depth.get(me, 0) + 1
            self._nested.append(waiter)
            if self._held is None:
                self._held = []
            outer_deadline = self._holder_deadline
            if deadline is not None and (outer_deadline is None or deadline < outer_deadline):
                self._holder_deadline = deadline
        try:
            while not waiter.done:
                if deadline is not None and time.monotonic() >= deadline:
                    return False
                if self._read_step() == READ_EOF:
                    break
            return True
        finally:
            with self._cv:
                self._depth[me] -= 1
                self._nested.remove(waiter)
                self._holder_deadline = outer_deadline

    # -- answers ---------------------------------------------------------------------------------

    def finish(self, waiter: Waiter) -> None:
        """Hand a caller the answer the reading thread just read for it.

        Inside a notification handler that called the peer (a nested read), an answer for
        anyone but that call is held back until the handler returns (``notification_done``):
        every notification read before an answer has been handled when its caller gets it.
        """
        if self._held is not None and threading.current_thread() is self._holder:
            with self._cv:
                if self._held is not None and waiter not in self._nested:
                    self._held.append(waiter)
                    return
        waiter.finish()

    @property
    def holding(self) -> bool:
        """True while answers are held back (a notification handler's call reads, nested)."""
        return self._held is not None

    def notification_done(self) -> None:
        """The outermost notification handler returned: hand over what it held back."""
        with self._cv:
            if not self._nested:
                self._hand_over_held()

    def _hand_over_held(self) -> None:
        # Called with _cv held.
        held, self._held = self._held, None
        for waiter in held or ():
            waiter.finish()

    # -- the role --------------------------------------------------------------------------------

    def _take(self, me: threading.Thread, *, watch: bool) -> None:
        self._holder = me
        self._holder_is_watch = watch
        self._holder_deadline = None

    def _release(self) -> None:
        """Give the role up to the first caller still waiting (else the hosts take it in time)."""
        with self._cv:
            self._holder = None
            self._holder_is_watch = False
            self._holder_deadline = None
            for waiter in self._callers:
                if not waiter.done:
                    waiter.signal.set()  # it takes the role on its next pass
                    return

    # -- requests --------------------------------------------------------------------------------

    def submit(self, job: Callable[[], None]) -> bool:
        """Run a request read from the stream; False when too many already wait (refuse it).

        Called by the thread that holds the role. A host keeping watch runs the job itself once
        it has passed the role on; anyone else queues it for a host.
        """
        me = threading.current_thread()
        with self._cv:
            if self._stopped:
                return False
            watching = self._holder is me and self._holder_is_watch
            if (
                watching
                and not self._depth.get(me)
                and self._running < self._max_handlers
                and me not in self._inline
            ):
                self._running += 1
                self._inline[me] = job
                self._ensure_watcher()  # it will keep watch once we let go
                return True
            # Waiting means beyond the free handler slots: a request queued while a slot is free
            # is taken by an idle host at once, so it does not count against max_queued.
            free = max(0, self._max_handlers - self._running)
            if len(self._queue) >= self._max_queued + free:
                return False  # spec RPC-15: the connection answers -32800
            self._queue.append(job)
            if not watching or self._running < self._max_handlers:
                # An idle host runs it, or keeps watch once a reading caller leaves. A host
                # keeping watch at the bound goes on keeping it: no other host is needed then.
                self._ensure_watcher()
            self._cv.notify()
            return True

    # -- hosts -----------------------------------------------------------------------------------

    def _ensure_watcher(self) -> None:
        """Keep one idle host ready: whenever no caller reads, someone must (called with _cv)."""
        if self._idle_hosts == 0 and not self._stopped and not self._eof:
            self._spawn_host()

    def _spawn_host(self) -> None:
        # Called with _cv held. The new thread counts as idle until it picks something up.
        thread = threading.Thread(
            target=self._host_main, name=f"{self._name}-host-{next(self._counter)}", daemon=True
        )
        self._hosts.append(thread)
        self._idle_hosts += 1
        thread.start()

    def _host_main(self) -> None:
        me = threading.current_thread()
        try:
            eager = False  # just ran a request it read: take the watch back at once
            while True:
                task = self._next_task(me, eager)
                if task is None:
                    return
                if task is _DUTY:
                    eager = self._keep_watch(me)
                else:
                    assert callable(task)  # a queued request
                    self._run(task)
                    eager = False
        finally:
            with self._cv:
                self._hosts.remove(me)
                self._cv.notify_all()

    def _next_task(self, me: threading.Thread, eager: bool = False) -> object:
        """Block until there is a queued request to run, or the watch to keep, or leave (None)."""
        with self._cv:
            idle_since = time.monotonic()
            while True:
                if self._stopped:
                    self._idle_hosts -= 1
                    return None
                if self._queue and self._running < self._max_handlers:
                    self._idle_hosts -= 1
                    self._running += 1
                    self._ensure_watcher()
                    return self._queue.popleft()
                now = time.monotonic()
                wait: Optional[float] = None
                if self._holder is None and not self._callers and not self._eof:
                    grace_left = max(self._callers_left, self._role_freed) + self._grace - now
                    if grace_left <= 0 or eager:
                        self._idle_hosts -= 1
                        self._take(me, watch=True)
                        return _DUTY
                    wait = grace_left
                elif (self._callers or self._holder_is_watch or self._running) and not self._eof:
                    # Look again soon: callers may leave, and a host that runs a request it read
                    # may not come back to the watch soon, without waking us.
                    wait = self._nap
                # An idle host leaves after a while, unless it is the last idle one: someone
                # must be there to keep watch.
                if self._idle_hosts > 1 and now - idle_since >= self._idle_timeout:
                    self._idle_hosts -= 1
                    return None
                limit = self._idle_timeout - (now - idle_since)
                self._cv.wait(limit if wait is None else min(wait, max(limit, 0.001)))

    def _keep_watch(self, me: threading.Thread) -> bool:
        """Hold the role and read, until a request to run, an interrupt, or the end of input."""
        status = READ_MORE
        try:
            while status == READ_MORE:
                status = self._read_step()
                if me in self._inline:
                    break
        finally:
            with self._cv:
                job = self._inline.pop(me, None)
                self._holder = None
                self._holder_is_watch = False
                self._idle_hosts += job is None  # back to idle, unless it runs a request
                for waiter in self._callers:
                    if not waiter.done:
                        waiter.signal.set()  # a caller takes the role
                        break
                else:
                    if job is not None:
                        # No wake-up: an idle host takes the watch after the grace, unless we
                        # are back first (most requests take less).
                        self._role_freed = time.monotonic()
        if job is not None:
            self._run(job)
            return True
        return False

    def _run(self, job: Callable[[], None]) -> None:
        try:
            job()
        except Exception:  # noqa: BLE001 - the job reports its own errors; this is a backstop
            log.exception("%s: request handler failed", self._name)
        finally:
            with self._cv:
                self._running -= 1
                self._idle_hosts += 1
                # This thread looks at the queue itself next (_next_task): nobody to wake.
