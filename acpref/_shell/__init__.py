"""The threaded shell around the protocol core (layer L3): streams, threads, the connection.

The core (``acpref._core``) decides what a message breaks; the shell moves the bytes, owns the
threads and the locks, and carries out what the core decided. Blocking pipes, plain threads, no
asyncio. The public face is ``acpref.connection`` (``Connection`` and its parts); everything
here is private.

**Where to start reading**, in the order a message travels:

1. ``connection`` — ``Connection``, one JSON-RPC 2.0 peer, one class: calling the peer, reading a
   line, a request, a notification or a response by kind, writing, the ending. Beside it, what it
   does to a line without state of its own: ``refusals`` (a line refused before it is decoded:
   over the line or item bound, nested too deep; what it belonged to, read from its ends) and
   ``encoder`` (the envelopes we write, and a message as one line within the bound).
2. ``calls`` — a request as each end holds it (``RequestContext``, ``PendingRequest``) and the
   connection's two books of them, each with its own lock: ``Outstanding`` (our requests
   waiting for their answers) and ``InFlight`` (the peer's, not answered yet, and what they
   hold decoded).
3. ``threads`` — who reads and who runs requests: reading as a role, callers reading their own
   answers, hosts (leader/follower), notifications in wire order. Why, with measurements.
4. ``observer`` — the live sides' use of the rules: the core behind the one lock, checking what
   we send and judging what we receive.
5. ``transport`` — the byte streams (``FdStream``, ``FileStream``, ``memory_pipe``), then
   ``framing`` (a stream cut into lines, the line bound: the one framing rule), ``process``
   (spawning a peer, its stderr, the shutdown ladder) and ``groups`` (process groups, the
   bounded waits, hurrying on our own stop).

What a line costs once decoded, before it is decoded, and the connection's default bounds, is
``acpref._bounds`` (layer L1: the core and the oracle use it too).
"""
