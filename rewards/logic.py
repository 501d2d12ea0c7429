"""Verifiers for puzzles checked by rules rather than by one right answer.

``countdown`` scores an arithmetic expression built from given numbers;
``sudoku`` scores a filled 4x4 grid. Any expression or grid that obeys the
rules earns full credit, so puzzles with several solutions need no answer
list. Like every verifier they are pure, batched and import only the
standard library.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from fractions import Fraction

MAX_EXPR_LENGTH = 60
# Only decimal integers, the four operations, parentheses and spaces; this
# rejects names, calls, powers, floats and underscores before `ast` sees them.
_EXPR_CHARS = re.compile(r"[0-9+\-*/() ]*")
_BIN_OPS = {
    ast.Add: lambda x, y: x + y,
    ast.Sub: lambda x, y: x - y,
    ast.Mult: lambda x, y: x * y,
    ast.Div: lambda x, y: x / y,  # Fraction division: exact, raises on zero
}

SUDOKU_SIZE = 4
SUDOKU_DIGITS = frozenset("1234")
# What a response may put between the 16 digits: whitespace and row/cell marks.
_GRID_SEPARATORS = re.compile(r"[\s/|,;-]+")


# --- countdown -------------------------------------------------------------


def evaluate_countdown(expr: str) -> tuple[Fraction, list[int]] | None:
    """The exact value of ``expr`` and the numbers it uses, or None if malformed.

    Division is exact (``Fraction``), so intermediate non-integers are fine
    as in the 24 game. Unary signs, powers, names and calls are not allowed,
    nor is dividing by zero.

    >>> evaluate_countdown("8/(3-8/3)")
    (Fraction(24, 1), [8, 3, 8, 3])
    >>> evaluate_countdown("2**3"), evaluate_countdown("-3+5"), evaluate_countdown("1/(2-2)")
    (None, None, None)
    """
    expr = expr.strip()
    if not expr or len(expr) > MAX_EXPR_LENGTH or not _EXPR_CHARS.fullmatch(expr):
        return None
    try:
        tree = ast.parse(expr, mode="eval")
    except (SyntaxError, ValueError):
        return None  # also leading zeros ("07"), which Python refuses
    numbers: list[int] = []
    try:
        value = _walk(tree.body, numbers)
    except ZeroDivisionError:
        return None
    return None if value is None else (value, numbers)


def _walk(node: ast.AST, numbers: list[int]) -> Fraction | None:
    """Evaluate an allowed node, appending each literal to ``numbers``."""
    if isinstance(node, ast.Constant):
        if type(node.value) is not int:  # bool is an int subclass
            return None
        numbers.append(node.value)
        return Fraction(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN_OPS:
        left, right = _walk(node.left, numbers), _walk(node.right, numbers)
        if left is None or right is None:
            return None
        return _BIN_OPS[type(node.op)](left, right)
    return None


def _strip_stated_result(response: str, target: int) -> str:
    """``"3*5+7=22"`` -> ``"3*5+7"``; a stated result other than the target stays (and fails)."""
    expr, equals, stated = response.partition("=")
    if equals and stated.strip() == str(target):
        return expr
    return response


def solves_countdown(response: str, numbers: list[int], target: int) -> bool:
    """True if ``response`` uses every number exactly once and equals ``target``.

    "Exactly once" as in the 24 game and Countdown: each given number must
    appear once, no other number may appear, and digits may not be glued
    together (``35`` from 3 and 5). An optional trailing ``=target`` is allowed.

    >>> solves_countdown("(3+5)*7-2", [2, 3, 5, 7], 54), solves_countdown("3*5+7=22", [3, 5, 7], 22)
    (True, True)
    >>> solves_countdown("7*7-5", [3, 5, 7], 44), solves_countdown("3*5+7", [3, 5, 7, 1], 22)
    (False, False)
    """
    if not isinstance(response, str):
        return False
    result = evaluate_countdown(_strip_stated_result(response, target))
    if result is None:
        return False
    value, used = result
    return value == target and Counter(used) == Counter(numbers)


def countdown(responses: list[str], problems: list[dict]) -> list[float]:
    """1.0 where a response solves its ``{"numbers": [...], "target": n}`` problem.

    >>> countdown(["8/(3-8/3)", "8*3", "3*8/3*8"], [{"numbers": [3, 3, 8, 8], "target": 24}] * 3)
    [1.0, 0.0, 0.0]
    """
    if len(responses) != len(problems):
        raise ValueError(
            f"countdown got {len(responses)} responses but {len(problems)} problems"
        )
    return [
        1.0 if solves_countdown(response, problem["numbers"], problem["target"]) else 0.0
        for response, problem in zip(responses, problems)
    ]


# --- sudoku ----------------------------------------------------------------


def parse_grid(text: str) -> str | None:
    """The 16 cells of a 4x4 grid written in ``text``, separators removed; None if malformed.

    >>> parse_grid("1234/3412\\n2143 4321")
    '1234341221434321'
    >>> parse_grid("1234 3412 2143 432"), parse_grid("12a4341221434321")
    (None, None)
    """
    if not isinstance(text, str):
        return None
    cells = _GRID_SEPARATORS.sub("", text)
    return cells if len(cells) == SUDOKU_SIZE**2 and set(cells) <= SUDOKU_DIGITS else None


def sudoku_units() -> list[list[int]]:
    """Cell indices of every row, column and 2x2 box: each must hold 1-4 once."""
    rows = [[4 * r + c for c in range(4)] for r in range(4)]
    cols = [[4 * r + c for r in range(4)] for c in range(4)]
    boxes = [[4 * (br + r) + bc + c for r in range(2) for c in range(2)]
             for br in (0, 2) for bc in (0, 2)]
    return rows + cols + boxes


def solves_sudoku(response: str, puzzle: str) -> bool:
    """True if ``response`` is a valid full grid that keeps every given of ``puzzle``.

    >>> solves_sudoku("1234 3412 2143 4321", "12.4/3..2/..../4321")
    True
    >>> solves_sudoku("2134 3412 1243 4321", "12.4/3..2/..../4321")  # breaks the givens
    False
    """
    givens = puzzle.replace("/", "")
    if len(givens) != SUDOKU_SIZE**2 or not set(givens) <= SUDOKU_DIGITS | {"."}:
        raise ValueError(f"malformed 4x4 sudoku puzzle {puzzle!r}")  # a caller bug
    grid = parse_grid(response)
    if grid is None:
        return False
    if any(given not in (".", cell) for given, cell in zip(givens, grid)):
        return False
    return all({grid[i] for i in unit} == SUDOKU_DIGITS for unit in sudoku_units())


def sudoku(responses: list[str], puzzles: list[str]) -> list[float]:
    """1.0 where a response solves its puzzle ('.' blanks, optional '/' between rows).

    >>> sudoku(["1234341221434321", "1234341221434312"], ["12.4/3..2/..../4321"] * 2)
    [1.0, 0.0]
    """
    if len(responses) != len(puzzles):
        raise ValueError(f"sudoku got {len(responses)} responses but {len(puzzles)} puzzles")
    return [
        1.0 if solves_sudoku(response, puzzle) else 0.0
        for response, puzzle in zip(responses, puzzles)
    ]
