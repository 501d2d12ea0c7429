"""Verifiers for puzzles checked by rules rather than by one right answer.

``countdown`` scores an arithmetic expression built from given numbers;
``sudoku`` scores a filled 4x4 grid. Any expression or grid that obeys the
rules earns full credit, so puzzles with several solutions need no answer
list. Like every verifier they are pure, batched and import only the
standard library.

``countdown`` reads the reply's final answer (``rewards.extract.final_answer``: an
``<answer>`` tag as TinyZero asks for, a box, "The answer is ...", the last line), written
with ``×``, ``−``, ``÷``, ``\\times``, ``\\div``, ``\\frac{a}{b}`` or in a sentence, and
otherwise the reply's last list of steps ("8 - 3 = 5", "5 * 4 = 20"): each step must use
numbers still available, state its result truly, and the last leave only the target.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from fractions import Fraction

from rewards.extract import final_answer

MAX_EXPR_LENGTH = 60
# Steps read from a list: a countdown of six numbers takes five.
MAX_STEPS = 8
# Only decimal integers, the four operations, parentheses and spaces; this
# rejects names, calls, powers, floats and underscores before `ast` sees them.
_EXPR_CHARS = re.compile(r"[0-9+\-*/() ]*")
# How replies write the four operations, and the brackets around them, in plain ASCII.
_SYMBOLS = (("**", " "), ("\\left", ""), ("\\right", ""), ("\\times", "*"), ("\\cdot", "*"),
            ("\\div", "/"), ("×", "*"), ("·", "*"), ("⋅", "*"), ("∗", "*"), ("÷", "/"),
            ("−", "-"), ("–", "-"), ("\\,", " "), ("\\!", ""), ("$", ""), ("[", "("),
            ("]", ")"))
# "x" between two operands, as a times sign.
_LETTER_TIMES = re.compile(r"(?<=[0-9)])[ \t]*[xX][ \t]*(?=[0-9(])")
_LATEX_FRACTION = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
# A run of expression characters in a sentence (maximal, so that matching never backtracks).
_EXPR_RUN = re.compile(r"[0-9+\-*/() ]+")
# One step of a list: "Step 1: 8 - 3 = 5", "- 5 × 4 = 20" (the expression is its last run).
_STEP = re.compile(r"([^=]*)=[ \t]*([0-9]+)[ \t.]*")
# A list item's mark: "- 8 - 3 = 5", "• 5 × 4 = 20" (bold, "**Step 1:**", is gone with "**").
_LIST_MARK = re.compile(r"[ \t]*[-*•+][ \t]+")
# Longer clauses are not steps (and would make matching them slow).
MAX_STEP_CHARS = 200
# What an answer ends with: marks after it (a period, a tick) are not arithmetic.
_LAST_TERM = re.compile(r"[\w)=]")
# A line that continues the expression above it: "= 5 × 4 × 2", "**Result:** 40".
_RESULT_LABEL = re.compile(r"[ \t*_>]*(?:result|total|value)[ \t*_]*:[ \t*_]*", re.IGNORECASE)
REMARK_LINES = 2  # lines without a number after the expression, read past at most
MAX_EXPRESSIONS = 64  # arithmetic runs in a reply read for its only solutions, at most
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
    """``"3*5+7=22"`` -> ``"3*5+7"``; a stated result other than the target stays (and fails).
    A chain whose every link is the target is its first link: ``"(8-3)*4*2 = 5*4*2 = 40"`` ->
    ``"(8-3)*4*2"``.

    >>> _strip_stated_result("(8-3)*4*2 = 5*4*2 = 20*2 = 40", 40)
    '(8-3)*4*2 '
    >>> _strip_stated_result("(8-3)*4*2 = 5*4 = 40", 40)  # a false link: left to fail
    '(8-3)*4*2 = 5*4 '
    """
    expr, equals, stated = response.rpartition("=")
    if not equals or stated.strip() != str(target):
        return response
    links = expr.split("=")
    if 1 < len(links) <= MAX_STEPS and all((evaluate_countdown(link) or (None,))[0] == target
                              for link in links[1:]):
        return links[0]
    return expr


def plain_arithmetic(text: str) -> str:
    """``text`` with the operations and brackets written as Python writes them.

    >>> plain_arithmetic("$(8 \\\\times 3) − \\\\frac{7}{7}$"), plain_arithmetic("6 ÷ 2 x 4")
    ('(8 * 3) - (7)/(7)', '6 / 2*4')
    """
    for _ in range(3):  # a fraction inside a fraction, as deep as a countdown answer goes
        text = _LATEX_FRACTION.sub(r"(\1)/(\2)", text)
    for written, plain in _SYMBOLS:
        text = text.replace(written, plain)
    text = _LETTER_TIMES.sub("*", text)  # "(8 - 3) x 4"
    return text.replace("{", "(").replace("}", ")")


def _without_trailing_marks(text: str) -> str:
    """``text`` up to its last word character, ``)`` or ``=``."""
    last = _LAST_TERM.search(text[::-1])
    return text[:len(text) - last.start()] if last else ""


def _arithmetic_runs(text: str) -> list[str]:
    """The runs of arithmetic in ``text`` that hold a digit and an operation."""
    return [run for run in _EXPR_RUN.findall(text)
            if re.search(r"[0-9]", run) and re.search(r"[-+*/]", run)]


def _expression(text: str, target: int) -> str:
    """The expression a final answer states: all of it, or in a sentence the last run of
    arithmetic ("So (3+5)*7-2 = 54." -> ``(3+5)*7-2``)."""
    text = _without_trailing_marks(plain_arithmetic(text))  # "= 40 ✓", "= 40."
    text = _strip_stated_result(text, target)
    if evaluate_countdown(text) is not None or not re.search(r"[A-Za-z]{2}", text):
        return text
    runs = _arithmetic_runs(text)
    return runs[-1] if runs else text


def continued_chain(text: str) -> str | None:
    """The last line of ``text`` above which lines start with "=" (or "Result:"), joined to
    the line they continue: one chain for ``_strip_stated_result`` to check; None if none.

    >>> continued_chain("((8 − 3) × 4) × 2\\n= 5 × 4 × 2\\n= 40")
    '((8 − 3) × 4) × 2 = 5 × 4 × 2 = 40'
    >>> continued_chain("**Expression:** `(8 - 3) * 4 * 2`\\n**Result:** 40")
    '**Expression:** `(8 - 3) * 4 * 2` = 40'
    >>> continued_chain("8 * 5 = 40"), continued_chain("= 40")
    (None, None)
    """
    lines = text.rstrip().rsplit("\n", MAX_STEPS + 1)
    tail: list[str] = []
    while len(lines) > 1 and len(tail) < MAX_STEPS:
        label = _RESULT_LABEL.match(lines[-1])
        line = "= " + lines[-1][label.end():] if label else lines[-1].strip()
        if not line.startswith("="):
            break
        tail.append(line.strip())
        lines.pop()
    if not tail or not lines[-1].strip():
        return None
    return " ".join([lines[-1].strip()] + tail[::-1])


def _solves_by_steps(steps: list[tuple[str, int]], numbers: list[int], target: int) -> bool:
    """True if ``steps`` (expression, stated result) use ``numbers`` once each and end at
    ``target``: each step draws on the numbers left (results of earlier steps included)."""
    pool = Counter(numbers)
    for expr, stated in steps:
        result = evaluate_countdown(expr)
        if result is None or result[0] != stated:
            return False
        used = Counter(result[1])
        if used - pool:
            return False  # a number that is not (or no longer) available
        pool = pool - used + Counter([stated])
    return bool(steps) and pool == Counter([target])


def last_steps(text: str) -> list[tuple[str, int]]:
    """The reply's last block of steps (a line or clause each), as (expression, stated result);
    a trial may run into it (``solves_countdown`` tries every tail of the block).

    >>> last_steps("8 or 3? Try 8*3 = 24.\\n\\nStep 1: 8 - 3 = 5\\nStep 2: 5 × 4 = 20\\nSo 20.")
    [('8*3', 24), ('8 - 3', 5), ('5 * 4', 20)]
    >>> last_steps("We do 8 - 3 = 5, then 5 * 4 = 20.")
    [('8 - 3', 5), ('5 * 4', 20)]
    """
    block: list[tuple[str, int]] = []
    for line in reversed(re.split(r"[\n,;]", plain_arithmetic(text))):
        if not re.search(r"[0-9]", line):
            continue  # "Then,", "Finally,": words between steps
        line = line[_LIST_MARK.match(line).end():] if _LIST_MARK.match(line) else line
        step = _STEP.fullmatch(line.strip()) if len(line) <= MAX_STEP_CHARS else None
        if step is None and block or len(block) == MAX_STEPS:
            break
        if step is not None:
            runs = _arithmetic_runs(step.group(1))
            if not runs:
                break
            block.append((runs[-1].strip(), int(step.group(2))))
    return block[::-1]


def solves_countdown(response: str, numbers: list[int], target: int, fmt: str = "auto") -> bool:
    """True if ``response`` uses every number exactly once and equals ``target``.

    "Exactly once" as in the 24 game and Countdown: each given number must
    appear once, no other number may appear, and digits may not be glued
    together (``35`` from 3 and 5). An optional trailing ``=target`` is allowed.
    The expression is the reply's final answer (module doc), or its last list of steps.

    >>> solves_countdown("(3+5)*7-2", [2, 3, 5, 7], 54), solves_countdown("3*5+7=22", [3, 5, 7], 22)
    (True, True)
    >>> solves_countdown("7*7-5", [3, 5, 7], 44), solves_countdown("3*5+7", [3, 5, 7, 1], 22)
    (False, False)
    >>> solves_countdown("<think>3*5 is 15</think><answer>3 × 5 + 7</answer>", [3, 5, 7], 22)
    True
    """
    if not isinstance(response, str):
        return False
    found = final_answer(response, fmt)
    for _ in range(REMARK_LINES):  # "✅ All numbers used exactly once." under the expression
        if found is None or found.how != "last_line" or any(c.isdigit() for c in found.text):
            break
        found = final_answer(response[:found.start], fmt)
    if found is None or not found.clear:
        return False
    result = evaluate_countdown(_expression(found.text, target))
    if result is not None:
        value, used = result
        if value == target and Counter(used) == Counter(numbers):
            return True
    # Steps: inside a marked answer, or the reply's own last ones where nothing is marked.
    marked = found.how not in ("phrase", "last_line")
    chain = None if marked else continued_chain(response[:found.end])
    result = evaluate_countdown(_expression(chain, target)) if chain else None
    if result is not None and result[0] == target and Counter(result[1]) == Counter(numbers):
        return True  # "(8 - 3) × 4 × 2" then "= 5 × 4 × 2", "= 40" on lines of their own
    steps = last_steps(found.text if marked else response[:found.end])
    # Trials may run straight into the steps: any tail of the block may be the solution.
    if any(_solves_by_steps(steps[i:], numbers, target) for i in range(len(steps))):
        return True
    return not marked and _only_solutions(response, numbers, target)


def _only_solutions(response: str, numbers: list[int], target: int) -> bool:
    """Whether the reply's answer part states at least one expression over exactly the given
    numbers and every such expression makes the target: the expression given once, then worked
    through or verified ("(8 - 3) * 4 * 2 = 40", then "First, 8 - 3 = 5. ..."). A trial that
    misses, or a second answer, among them is a 0."""
    part = response.rpartition("</think>")[2]
    runs = _arithmetic_runs(plain_arithmetic(part.replace("\\(", " ").replace("\\)", " ")))
    if len(runs) > MAX_EXPRESSIONS or re.search(r"[0-9]\.[0-9]", part):
        return False  # a few expressions and their steps, over integers: not 7.0 for 7
    made = [evaluate_countdown(run.strip()) for run in runs]
    full = [value for value, used in filter(None, made) if Counter(used) == Counter(numbers)]
    return bool(full) and all(value == target for value in full) and not _false_equation(part)


def _false_equation(text: str) -> bool:
    """Whether an "=" of ``text`` joins two values that differ ("(8 - 3) * 4 * 2 = 5 * 4 = 40",
    "3*5+7=23"); a line that starts with "=" continues the one above it.

    >>> _false_equation("First, 8 - 3 = 5. Then 5 * 4 = 20."), _false_equation("8 - 3 = 6")
    (False, True)
    """
    if text.count("=") > MAX_EXPRESSIONS:
        return True  # thousands of equations are padding, not a solution's steps
    text = re.sub(r"\n[ \t]*(?==)", " ", plain_arithmetic(text))
    for line in text.splitlines():
        sides = line.split("=")
        for left, right in zip(sides, sides[1:]):
            a = [r for r in _EXPR_RUN.findall(left) if re.search(r"[0-9]", r)]
            b = [r for r in _EXPR_RUN.findall(right) if re.search(r"[0-9]", r)]
            x = evaluate_countdown(a[-1].strip()) if a else None
            y = evaluate_countdown(b[0].strip()) if b else None
            if x is not None and y is not None and x[0] != y[0]:
                return True
    return False


def countdown(responses: list[str], problems: list[dict], fmt: str = "auto") -> list[float]:
    """1.0 where a response solves its ``{"numbers": [...], "target": n}`` problem.

    >>> countdown(["8/(3-8/3)", "8*3", "3*8/3*8"], [{"numbers": [3, 3, 8, 8], "target": 24}] * 3)
    [1.0, 0.0, 0.0]
    """
    if len(responses) != len(problems):
        raise ValueError(
            f"countdown got {len(responses)} responses but {len(problems)} problems"
        )
    return [
        1.0 if solves_countdown(response, problem["numbers"], problem["target"], fmt) else 0.0
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
