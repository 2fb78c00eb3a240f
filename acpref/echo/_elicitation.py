"""The echo agent's elicitations: a form, and a URL to visit (``elicitation/create``).

Spec: elicitation.mdx. ``/form`` asks a few answers in form mode and validates them again
against its schema; ``/url`` asks the user to open a page in URL mode, then sends
``elicitation/complete``. Neither is sent to a client that did not advertise its mode.
"""

from __future__ import annotations

import json
import os
from typing import List

from .. import schema as s
from .._forms import validate as validate_form
from ._commands import END, Invocation, _missing_named

__all__: List[str] = []


def form(inv: Invocation) -> s.StopReason:
    if not inv.turn.client.supports("elicitation.form"):
        # spec ELICIT-06, ELICIT-07: never an unadvertised mode; say so instead.
        return _missing_named(inv, "form", "form elicitation", "elicitation.form")
    # spec ELICIT-15, ELICIT-32: nothing secret is asked (no password, key, token or payment
    # field), and no URL is in the message, titles or descriptions.
    schema = s.ElicitationSchema(
        type=s.ElicitationSchemaType.OBJECT,
        title="About you",
        properties={
            "name": s.StringPropertySchema(
                title="Name", description="What should I call you?", min_length=1, max_length=100
            ),
            "colour": s.StringPropertySchema(
                title="Favourite colour",
                one_of=[s.EnumOption(const=c, title=c.title()) for c in ("red", "green", "blue")],
                default="blue",
            ),
            "echoes": s.IntegerPropertySchema(
                title="How many echoes", minimum=1, maximum=5, default=1
            ),
            "news": s.BooleanPropertySchema(title="Send me news", default=False),
        },
        required=["name"],
    )
    answer = inv.turn.elicit_form("The echo agent would like to know a little about you.", schema)
    action = answer.action
    if isinstance(action, s.ElicitationAcceptAction):
        # spec ELICIT-21: content omitted and null read the same (no answers).
        content = action.content if isinstance(action.content, dict) else {}
        # spec ELICIT-13: the agent validates the answers again, against the schema it sent;
        # ELICIT-23: answers that do not fit are not used (nothing is guessed).
        problems = validate_form(schema, content)
        if problems:
            listed = "; ".join(f"{field} {problem}" for field, problem in sorted(problems.items()))
            inv.say(
                f"The form came back with answers that do not fit it ({listed}); not using them."
            )
            return END
        name = content["name"]
        times = content.get("echoes", 1)
        assert isinstance(times, int)  # validated above: a whole number
        inv.say(f"Hello {name}! " * times + f"You answered {json.dumps(content, sort_keys=True)}.")
    elif isinstance(action, s.ElicitationDeclineAction):
        # spec ELICIT-23: nothing is presumed: a decline (or a cancel) ends the command safely.
        inv.say("You declined the form; that is fine.")
    else:
        inv.say("You dismissed the form without choosing.")
    return END

def url(inv: Invocation) -> s.StopReason:
    if not inv.turn.client.supports("elicitation.url"):
        # spec ELICIT-16: no fallback to form mode for what needs URL mode: say so, ask nothing.
        return _missing_named(inv, "url", "URL elicitation", "elicitation.url")
    # spec ELICIT-24, ELICIT-30, ELICIT-31: unique among outstanding URL elicitations; no
    # credentials or personal data in the URL; https.
    elicitation_id = "echo-" + os.urandom(6).hex()
    url = f"https://example.com/acpref-echo/consent?elicitation={elicitation_id}"
    answer = inv.turn.elicit_url(
        "The echo agent would like you to open a page.", url, elicitation_id=elicitation_id
    )
    if isinstance(answer.action, s.ElicitationAcceptAction):
        # An accept is consent to open the URL; the echo "interaction" is over at once.
        # spec ELICIT-26: elicitation/complete when the (pretend) interaction finishes.
        inv.turn.complete_elicitation(elicitation_id)
        inv.say(f"You agreed to open {url}; I sent elicitation/complete for {elicitation_id}.")
    elif isinstance(answer.action, s.ElicitationDeclineAction):
        inv.say("You declined to open the page.")
    else:
        inv.say("You dismissed the request to open the page.")
    return END
