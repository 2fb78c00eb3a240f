"""A scripted MCP server over stdio for ``tests/test_mcp_stdio.py``: standard library only.

Run as ``python mcp_scripted.py MODE [OPTION...]``. It does not use acpref nor the MCP SDK, so
that it can misbehave on purpose and so that acpref's client is tried against an independent
peer. If ``$MCP_PIDFILE`` is set, the process writes its pid there first.

Modes:

* ``serve``: a well-behaved server. Before answering ``initialize`` it sends the client a
  ``ping`` request, a ``roots/list`` request and a ``notifications/message`` notification, and
  records the answers. Its tools come in three ``tools/list`` pages (``nextCursor``):

  - ``echo`` {"text"}: answers the text;
  - ``getenv`` {"names": [...]}: answers the values of those environment variables (JSON);
  - ``cwd``: answers the working directory;
  - ``log``: answers what the server received and recorded, as JSON, once its own requests
    are answered;
  - ``slow`` {"seconds"}: answers after that long (cancellation notices still get read);
  - ``child``: answers the pid of the child process started with ``--fork``;
  - ``die``: exits at once with status 3, without answering.

  Options: ``--version V`` answers protocolVersion V; ``--fork`` starts a child process (a
  ``sleep``) in the server's process group at start.
* ``fail``: writes ``boom`` and the value of ``$SECRET`` (if set) to stderr, exits 1.
* ``silent``: reads stdin and never answers; ignores the end of stdin (sleeps on).
* ``endless``: answers ``initialize``, then every ``tools/list`` with a page of tools and a
  ``nextCursor``, for ever. Options: ``--tools N`` tools a page (default 1000), ``--size B``
  bytes of description each (default 1000), ``--same`` the same names on every page.
* ``plan FILE``: answers ``initialize``, then the n-th ``tools/list`` with the n-th result of
  the JSON file's ``pages`` (whatever its cursor), then, if ``endless`` is true there, pages of
  tools never seen before, each with a ``nextCursor``, for ever (else ``{"tools": []}``).
* ``stubborn``: like ``silent``, but ignores SIGTERM, and forks a child that ignores it too.

Nothing but protocol messages goes to stdout.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

PAGES = [["echo", "getenv"], ["cwd", "log", "slow"], ["child", "die"]]

received = []  # what the server recorded: methods of notifications, answers to its requests
pending = {}  # id of a request the server sent and has no answer to yet -> its method
answered = threading.Condition()  # guards both, notified at each answer
write_lock = threading.Lock()
child = None


def send(message):
    with write_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def text_result(text):
    return {"content": [{"type": "text", "text": text}], "isError": False}


def tool(name):
    return {
        "name": name,
        "description": f"the {name} tool",
        "inputSchema": {"type": "object", "properties": {}},
    }


def call_tool(params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "echo":
        return text_result(str(args.get("text", "")))
    if name == "getenv":
        values = {n: os.environ.get(n) for n in args.get("names", [])}
        return {
            "content": [{"type": "text", "text": json.dumps(values)}],
            "structuredContent": values,
        }
    if name == "cwd":
        return text_result(os.getcwd())
    if name == "log":
        # The client may answer the server's requests on a thread of its own, after it sends
        # this call: the log waits for those answers, so that it says what the client answered.
        with answered:
            answered.wait_for(lambda: not pending, timeout=10)
            return {
                "content": [{"type": "text", "text": json.dumps(received)}],
                "structuredContent": {"received": list(received)},
            }
    if name == "slow":
        time.sleep(float(args.get("seconds", 5)))
        return text_result("slept")
    if name == "child":
        return {"content": [], "structuredContent": {"pid": child.pid if child else None}}
    if name == "die":
        os._exit(3)
    return {"content": [{"type": "text", "text": f"no tool {name}"}], "isError": True}


def serve(version):
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method = message.get("method")
        if method is None:  # an answer to one of our requests
            with answered:
                asked = pending.pop(message.get("id"), "?")
                received.append(
                    {"answer_to": asked, "result": message.get("result"),
                     "error": message.get("error")}
                )
                answered.notify_all()
            continue
        if "id" not in message:
            received.append({"notification": method, "params": message.get("params")})
            continue
        request_id = message["id"]
        params = message.get("params") or {}
        if method == "initialize":
            received.append({"initialize": params})
            with answered:
                pending["srv-ping"] = "ping"
                pending["srv-roots"] = "roots/list"
            send({"jsonrpc": "2.0", "id": "srv-ping", "method": "ping"})
            send({"jsonrpc": "2.0", "id": "srv-roots", "method": "roots/list", "params": {}})
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"level": "info", "data": "hi"},
                }
            )
            result = {
                "protocolVersion": version or params.get("protocolVersion"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1"},
                "instructions": "Use the echo tool.",
            }
            send({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "tools/list":
            page = int(params.get("cursor") or 0)
            result = {"tools": [tool(n) for n in PAGES[page]]}
            if page + 1 < len(PAGES):
                result["nextCursor"] = str(page + 1)
            send({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "tools/call":
            # Each call on a thread, so that a slow one does not stop the reading.
            def run(request_id=request_id, params=params):
                send({"jsonrpc": "2.0", "id": request_id, "result": call_tool(params)})

            threading.Thread(target=run, daemon=True).start()
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )


def answer_tools_lists(next_page):
    """Answer initialize, then each tools/list with ``next_page()``; anything else with {}."""
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        request_id, method = message["id"], message["method"]
        params = message.get("params") or {}
        if method == "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            }
        elif method == "tools/list":
            result = next_page(params.get("cursor"))
        else:
            result = {}
        send({"jsonrpc": "2.0", "id": request_id, "result": result})


def endless(options):
    per_page = int(options[options.index("--tools") + 1]) if "--tools" in options else 1000
    size = int(options[options.index("--size") + 1]) if "--size" in options else 1000
    same = "--same" in options
    description = "d" * size

    def page(cursor):
        number = int(cursor or 0)
        prefix = "t" if same else f"p{number}-"
        tools = [
            {"name": f"{prefix}{i}", "description": description, "inputSchema": {}}
            for i in range(per_page)
        ]
        return {"tools": tools, "nextCursor": str(number + 1)}

    answer_tools_lists(page)


def plan(path):
    with open(path) as f:
        script = json.load(f)
    pages = iter(script["pages"])
    extra = iter(range(1 << 62))
    done = object()

    def page(cursor):
        result = next(pages, done)
        if result is not done:
            return result
        if not script.get("endless"):
            return {"tools": []}
        number = next(extra)
        return {"tools": [{"name": f"more-{number}-{i}"} for i in range(3)], "nextCursor": "more"}

    answer_tools_lists(page)


def sleep_forever():
    while True:
        time.sleep(60)


def main():
    global child
    if os.environ.get("MCP_PIDFILE"):
        with open(os.environ["MCP_PIDFILE"], "w") as f:
            f.write(str(os.getpid()))
    mode, options = sys.argv[1], sys.argv[2:]
    if "--fork" in options:
        child = subprocess.Popen(
            ["sleep", "300"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
        )
    if mode == "serve":
        version = options[options.index("--version") + 1] if "--version" in options else None
        serve(version)
    elif mode == "endless":
        endless(options)
    elif mode == "plan":
        plan(options[0])
    elif mode == "fail":
        sys.stderr.write("boom: " + os.environ.get("SECRET", "") + "\n")
        sys.exit(1)
    elif mode == "silent":
        for _ in sys.stdin:
            pass
        sleep_forever()
    elif mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if os.fork() == 0:  # the child ignores SIGTERM too, and outlives a killed parent
            sleep_forever()
        for _ in sys.stdin:
            pass
        sleep_forever()


if __name__ == "__main__":
    main()
