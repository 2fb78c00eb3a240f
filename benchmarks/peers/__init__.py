"""The benchmark's peers: one small echo agent and one client driver per implementation.

Every agent behaves the same way, chosen by the text of the prompt's first block:

* ``stream N``: N ``agent_message_chunk`` updates (text ``"token "``), then ``end_turn``;
* ``read PATH``: one ``fs/read_text_file`` request to the client, then ``end_turn``;
* ``big N``: one ``agent_message_chunk`` update whose text is N characters long, then ``end_turn``;
* anything else: the text echoed back as one ``agent_message_chunk``, then ``end_turn``.

Every client driver spawns its own agent, runs ``initialize`` and ``session/new``, warms up, then
runs one measure (``--measure roundtrip|stream|read|update``) and prints one JSON object with
the timings. ``benchmarks/run.py`` alternates the implementations and compares them.

* ``floor_*``: no framework: ``json`` and ``os`` pipes, one line per message;
* ``acpref_*``: acpref's public API (``acpref.agent.Agent``, ``acpref.client.ClientSideConnection``);
* ``sdk_*``: the official Python SDK's public API (``acp``: ``run_agent``, ``spawn_agent_process``),
  run with the interpreter of ``benchmarks/.venv-sdk``.
"""
