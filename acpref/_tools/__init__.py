"""The tools that only the command line and the reports use, off the reference's reading path.

Nothing in the protocol's library (``acpref.agent``, ``acpref.client``, ``acpref.oracle``, the
core and the wire under them) imports this package: ``import acpref.client`` loads none of it
(tests/test_structure.py). Its users are ``acpref._cli``, the demo and the pytest plugin.

* ``terminal``: the reference client's terminal UI, plain-text rendering of a session as it
  streams (``Renderer``), and making peer text inert for a terminal (``inert``);
* ``show_html``: the HTML page of ``acpref show`` (and of ``--report``), from the oracle's layout
  (``acpref.oracle._show``); its stylesheet, script and legend are the data files ``show.css``,
  ``show.js`` and ``show_legend.html`` beside it;
* ``spec_index``: where each clause is enforced, checked, exercised and tested, read from the
  code's ``# spec`` comments (``acpref spec``, the register);
* ``spec_diff``: what changed between two schema files (``acpref spec-diff``).
"""
