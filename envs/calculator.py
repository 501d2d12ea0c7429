"""Multi-turn tool use: two-digit multiplication with a calculator ("k2rl/Calculator-v1").

The prompt is ``"37*48="``. An action ``calc(EXPR)`` (or the JSON form
``<tool_call>{"name": "calc", "arguments": {"expression": EXPR}}</tool_call>``,
envs.tool_calls) calls the calculator and the env replies with the result (e.g.
``"1776"``); any other action is the final answer. A small model cannot multiply in its head, so reward comes from
learning to call the tool and copy its result.

A product is one problem whichever factor comes first: ``"37*48="`` and ``"48*37="`` share
the key ``"calc:37*48"`` and so the split (v0 keyed the ordered factors, and ``b*a`` could be
trained on while ``a*b`` was held out).
"""

from __future__ import annotations

import ast
import re

import numpy as np

from envs.base import Problem, TextEnv, check_line, final_part
from envs.judging import TeachesJudging
from envs.tool_calls import plain_call, plain_calls, schema

OPERAND_MIN, OPERAND_MAX = 10, 99
TOOL_CALL = re.compile(r"^\s*calc\((.*)\)\s*$")
TOOL_ERROR = "error: bad expression"
MAX_EXPR_LENGTH = 40
MAX_OPERAND = 999_999  # at most 6 digits
# Only plain decimal integer arithmetic: rejecting other characters up front
# also rules out hex, underscores and names before `ast` sees them.
EXPR_CHARS = re.compile(r"[0-9+\-*() ]*")
BIN_OPS = {
    ast.Add: lambda x, y: x + y,
    ast.Sub: lambda x, y: x - y,
    ast.Mult: lambda x, y: x * y,
}


def evaluate(expr: str) -> int | None:
    """The value of an integer +,-,* expression, or None if malformed or unsafe.

    Never calls eval: the parse tree is walked and only int constants and
    binary +,-,* are accepted, so the length and operand limits bound the work.

    >>> evaluate("37*48"), evaluate("(1+2)*3-4")
    (1776, 5)
    >>> evaluate("import os"), evaluate("2**99"), evaluate("1234567*2")
    (None, None, None)
    """
    expr = expr.strip()
    if not expr or len(expr) > MAX_EXPR_LENGTH or not EXPR_CHARS.fullmatch(expr):
        return None
    try:
        tree = ast.parse(expr, mode="eval")
    except (SyntaxError, ValueError):
        return None
    return _walk(tree.body)


def _walk(node: ast.AST) -> int | None:
    """Evaluate an allowed node; None for anything outside the tiny grammar."""
    if isinstance(node, ast.Constant):
        value = node.value
        # bool is an int subclass; the char filter already excludes it, but be explicit.
        if type(value) is int and 0 <= value <= MAX_OPERAND:
            return value
        return None
    if isinstance(node, ast.BinOp) and type(node.op) in BIN_OPS:
        left, right = _walk(node.left), _walk(node.right)
        if left is None or right is None:
            return None
        return BIN_OPS[type(node.op)](left, right)
    return None


def identity(a: int, b: int) -> str:
    """The problem's key: the two factors in ascending order.

    >>> identity(48, 37), identity(37, 48)
    ('calc:37*48', 'calc:37*48')
    """
    a, b = sorted((a, b))
    return f"calc:{a}*{b}"


def _calculate(call: str) -> str:
    """The calculator's reply to one plain call: the value, or TOOL_ERROR."""
    match = TOOL_CALL.match(call)
    value = evaluate(match.group(1)) if match else None
    return TOOL_ERROR if value is None else str(value)


class CalculatorEnv(TextEnv, TeachesJudging):
    """``a*b`` with a, b uniform in 10..99; up to 3 turns, tool calls included."""

    task = "tool_use"
    budget = 24
    max_turns = 3
    reward_name = "exact_int"
    tools = (schema("calc", "Evaluate integer arithmetic with + - * and parentheses.",
                    expression="the expression, e.g. 37*48"),)

    def __init__(self, tool_rate: float = 0.5, render_mode: str | None = None) -> None:
        if not 0.0 <= tool_rate <= 1.0:
            raise ValueError(f"tool_rate must be in [0, 1], got {tool_rate}")
        super().__init__(render_mode=render_mode)
        self.tool_rate = tool_rate  # how often the demonstrator calls the tool

    def _draw(self) -> Problem:
        a, b = (int(x) for x in self.np_random.integers(OPERAND_MIN, OPERAND_MAX + 1, size=2))
        # The prompt keeps the drawn order; the key is the same for both orders.
        return Problem(key=identity(a, b), prompt=f"{a}*{b}=", answer=a * b)

    def _step(self, action: str) -> list[str] | None:
        # A call in a model family's own form (envs.tool_calls); a malformed one raises
        # MalformedCall, which TextEnv.step answers with an error the model sees.
        calls = plain_calls(action)
        if calls is None:
            if TOOL_CALL.match(action) is None:
                return None  # not a tool call: the final answer
            calls = [action]
        # Tool errors are observations, so the model can see and recover from them; several
        # calls in one turn are answered in order, one tool message each.
        return [_calculate(call) for call in calls]

    def expert_action(self, rng: np.random.Generator) -> str:
        """Tool call or rough guess first; after a tool reply, copy the reply.

        The direct guess keeps the product's leading digits and randomises
        the last two, like a person estimating (or a small model), so it is
        usually wrong: RL has to discover that calling the tool pays.
        """
        problem = self._require_active()
        if self._messages[-1]["role"] == "tool":
            return self._messages[-1]["content"]
        if rng.random() < self.tool_rate:
            return f"calc({problem.prompt.removesuffix('=')})"  # "37*48=" -> "calc(37*48)"
        guess = problem.answer - problem.answer % 100 + int(rng.integers(100))
        return str(guess)

    # --- the critic's scripted expert: the call it would make, then each transcript's use of it

    def judge_working(self) -> str:
        """The tool call the critic would make: "calc(37*48)" (it cannot multiply either)."""
        return f"calc({self._require_active().prompt.removesuffix('=')})"

    def judge_check(self, response: str) -> str:
        """Whether the transcript called the tool on this product and copied its result:
        "tool 1776, said 1776: yes", "no tool, said 1742: no", "called 37*84: no"."""
        problem = self._require_active()
        parts = [p.strip() for p in response.split(" | ")]
        said = final_part(response)
        call = TOOL_CALL.match(plain_call(parts[0])) if len(parts) >= 3 else None
        if call is None:
            return check_line(f"no tool, said {said}", False)
        expr = call.group(1).strip()
        if evaluate(expr) != problem.answer or sorted(expr.split("*")) != sorted(
                problem.prompt.removesuffix("=").split("*")):
            return check_line(f"called {expr[:12]}", False)
        return check_line(f"tool {parts[1][:12]}, said {said}", said == parts[1] == str(problem.answer))

    def rejected_response(self, rng: np.random.Generator) -> str:
        """A guess without the tool, or the tool's result copied with a slip."""
        problem = self._require_active()
        right = str(problem.answer)
        while True:
            if rng.random() < 0.5:
                text = str(problem.answer - problem.answer % 100 + int(rng.integers(100)))
            else:
                i = int(rng.integers(len(right)))
                slip = right[:i] + str((int(right[i]) + int(rng.integers(1, 10))) % 10) + right[i + 1:]
                text = f"{self.judge_working()} | {right} | {slip}"
            if final_part(text) != right:
                return text
