"""Multi-turn tool use: look up two facts and combine them ("k2rl/Lookup-v1").

The prompt is ``"Pop of Avon + pop of Bex?"``. The model has two tools, each
called by making the whole turn the call:

- ``get(Avon,pop)`` replies with the fact from the table below, e.g. ``120``;
- ``calc(120+75)`` replies with the value, e.g. ``195``.

Any other turn is the final answer, scored by ``exact_int``. A malformed call,
an unknown city or field, or a bad expression is answered with an error
observation (``error: no city Avo``), never an exception, so the model can
see its mistake and retry within its four turns.

A sum is one problem whichever term comes first: ``"Pop of Avon + area of Bex?"`` and
``"Area of Bex + pop of Avon?"`` share the key ``"lookup:area:Bex+pop:Avon"`` and so the
split (v0 keyed the ordered terms, and one order could be trained on while the other was
held out). A difference is keyed as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from envs.base import Problem, TextEnv, turns_and_results
from envs.calculator import TOOL_ERROR as CALC_ERROR
from envs.calculator import evaluate
from envs.tool_calls import MalformedCall, plain_calls, schema

# Made-up facts: populations (thousands) and areas (square km). Names are at
# most 4 letters so that a whole episode fits the 48-token budget.
CITIES: dict[str, dict[str, int]] = {
    "Avon": {"pop": 120, "area": 31}, "Bex": {"pop": 75, "area": 12},
    "Cray": {"pop": 342, "area": 58}, "Dunn": {"pop": 88, "area": 9},
    "Elm": {"pop": 519, "area": 77}, "Fenn": {"pop": 203, "area": 24},
    "Gale": {"pop": 47, "area": 6}, "Hull": {"pop": 731, "area": 95},
    "Iona": {"pop": 16, "area": 3}, "Jura": {"pop": 264, "area": 41},
    "Kemp": {"pop": 158, "area": 19}, "Lune": {"pop": 402, "area": 66},
    "Mold": {"pop": 93, "area": 14}, "Nith": {"pop": 611, "area": 83},
    "Orme": {"pop": 35, "area": 8}, "Pell": {"pop": 287, "area": 45},
    "Quay": {"pop": 176, "area": 22}, "Rye": {"pop": 58, "area": 11},
    "Sark": {"pop": 24, "area": 5}, "Tarn": {"pop": 455, "area": 62},
}
FIELDS = ("pop", "area")
OPS = ("+", "-")
TOOL_CALL = re.compile(r"^\s*(get|calc)\s*\((.*)\)\s*$", re.DOTALL)
TOOL_START = re.compile(r"^\s*(get|calc)\s*\(")  # an attempted call, even if malformed
USAGE_ERROR = "error: use get(city,field) or calc(expr)"
MAX_ECHO = 12  # characters of a bad name repeated in an error: short observations


@dataclass(frozen=True)
class LookupProblem(Problem):
    """``field_a of city_a op field_b of city_b``."""

    city_a: str
    field_a: str
    op: str
    city_b: str
    field_b: str


def get(args: str) -> str:
    """The ``get`` tool: the fact as text, or an error observation.

    >>> get("Avon,pop"), get(" bex , area "), get("Avo,pop"), get("Avon,size")
    ('120', '12', 'error: no city Avo', 'error: no field size')
    """
    city, comma, field = args.partition(",")
    if not comma or "," in field:
        return USAGE_ERROR
    city, field = city.strip(), field.strip().lower()
    # Case-insensitive names: the lesson is to look things up, not to capitalise.
    canonical = {name.lower(): name for name in CITIES}.get(city.lower())
    if canonical is None:
        return f"error: no city {city[:MAX_ECHO]}"
    if field not in FIELDS:
        return f"error: no field {field[:MAX_ECHO]}"
    return str(CITIES[canonical][field])


def normalise(call: str) -> str:
    """A tool call without spaces and in lower case: equivalent calls compare equal.

    >>> normalise(" get(Avon, pop) ")
    'get(avon,pop)'
    """
    return "".join(call.split()).lower()


def call_tool(action: str) -> str | None:
    """The tool's reply if ``action`` attempts a call (plain form or a model family's own,
    envs.tool_calls; several calls answered one a line), else None (a final answer); raises
    MalformedCall for a call that cannot be read."""
    replies = call_tools(action)
    return None if replies is None else "\n".join(replies)


def call_tools(action: str) -> list[str] | None:
    """The tool's reply to each call ``action`` makes, in order, else None (a final answer)."""
    calls = plain_calls(action)
    if calls is not None:
        return [_reply(call) if TOOL_START.match(call) else USAGE_ERROR for call in calls]
    if not TOOL_START.match(action):
        return None
    return [_reply(action)]


def _reply(action: str) -> str:
    """The reply to one plain call."""
    call = TOOL_CALL.match(action)
    if call is None:
        return USAGE_ERROR
    name, args = call.groups()
    if name == "get":
        return get(args)
    value = evaluate(args)
    return CALC_ERROR if value is None else str(value)


def identity(field_a: str, city_a: str, op: str, field_b: str, city_b: str) -> str:
    """The problem's key: the two terms of a sum in sorted order, a difference as it is.

    >>> identity("pop", "Avon", "+", "area", "Bex"), identity("area", "Bex", "+", "pop", "Avon")
    ('lookup:area:Bex+pop:Avon', 'lookup:area:Bex+pop:Avon')
    >>> identity("pop", "Avon", "-", "area", "Bex")
    'lookup:pop:Avon-area:Bex'
    """
    first, second = f"{field_a}:{city_a}", f"{field_b}:{city_b}"
    if op == "+":
        first, second = sorted((first, second))
    return f"lookup:{first}{op}{second}"


class LookupEnv(TextEnv):
    """Two facts from ``CITIES`` added or subtracted; up to 4 turns with tools."""

    task = "tool_use"
    budget = 48
    max_turns = 4
    reward_name = "exact_int"
    tools = (schema("get", "A fact about a city.", city="the city, e.g. Avon",
                    field="the fact: pop or area"),
             schema("calc", "Evaluate integer arithmetic with + - * and parentheses.",
                    expression="the expression, e.g. 120+75"))

    def _draw(self) -> Problem:
        rng = self.np_random
        city_a, city_b = (str(c) for c in rng.choice(list(CITIES), size=2, replace=False))
        field_a, field_b = (FIELDS[int(i)] for i in rng.integers(len(FIELDS), size=2))
        op = OPS[int(rng.integers(len(OPS)))]
        a, b = CITIES[city_a][field_a], CITIES[city_b][field_b]
        return LookupProblem(
            # The prompt keeps the drawn order; the key is the same for both orders of a sum.
            key=identity(field_a, city_a, op, field_b, city_b),
            prompt=f"{field_a.capitalize()} of {city_a} {op} {field_b} of {city_b}?",
            answer=a + b if op == "+" else a - b,
            city_a=city_a, field_a=field_a, op=op, city_b=city_b, field_b=field_b,
        )

    def _step(self, action: str) -> list[str] | None:
        # Tool errors are observations, so the model can see and recover from them (a
        # malformed call too: TextEnv.step answers the MalformedCall it raises).
        return call_tools(action)

    def _observed(self) -> dict[str, int]:
        """Successful tool calls so far, as normalised call -> value: "get(avon,pop)" -> 120."""
        seen: dict[str, int] = {}
        # The transcript: user, then each assistant turn followed by one tool message a call
        for action, replies in turns_and_results(self._messages):
            try:
                calls = plain_calls(action["content"]) or [action["content"]]
            except MalformedCall:
                continue
            for call, value in zip(calls, replies):
                if not value.startswith("error"):
                    seen[normalise(call)] = int(value)
        return seen

    def expert_action(self, rng: np.random.Generator) -> str:
        """The next step of get, get, calc, answer, skipping what the transcript already has.

        Each step reuses values seen in earlier observations; on the last turn
        it answers at once, so it also finishes an episode someone else began.
        """
        problem = self._require_active()
        assert isinstance(problem, LookupProblem)
        if self.turn >= self.max_turns - 1:
            return str(problem.answer)
        seen = self._observed()
        first = f"get({problem.city_a},{problem.field_a})"
        second = f"get({problem.city_b},{problem.field_b})"
        for call in (first, second):
            if normalise(call) not in seen:
                return call
        calc = f"calc({seen[normalise(first)]}{problem.op}{seen[normalise(second)]})"
        return str(seen[calc]) if calc in seen else calc
