"""Single-turn 4x4 Sudoku with 2x2 boxes ("k2rl/Sudoku-v0").

The prompt is the puzzle, rows separated by '/' and blanks as '.':
``"Sudoku 12.4/3..2/..../4321"``; the action is the full grid as 16 digits,
``1234341221434321`` (separators are tolerated). The ``sudoku`` verifier
accepts any valid grid that keeps the givens, so the problem's answer is the
puzzle itself and a puzzle with several solutions needs no special case.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from envs.base import Problem, TextEnv
from rewards.logic import SUDOKU_DIGITS, sudoku_units

BLANKS_MIN, BLANKS_MAX = 4, 8


@dataclass(frozen=True)
class SudokuProblem(Problem):
    """A puzzle with the grid it was cut from."""

    solution: str  # 16 digits, row by row


def complete(cells: str) -> list[str]:
    """Every valid grid that extends ``cells`` ('.' for unknown), in order.

    >>> complete("123434122143432.")
    ['1234341221434321']
    """
    blank = cells.find(".")
    if blank < 0:
        return [cells]
    taken = {cells[i] for unit in sudoku_units() if blank in unit for i in unit}
    return [
        grid
        for digit in sorted(SUDOKU_DIGITS - taken)
        for grid in complete(cells[:blank] + digit + cells[blank + 1 :])
    ]


@lru_cache(maxsize=1)
def all_grids() -> tuple[str, ...]:
    """The 288 valid 4x4 grids, found once by a few milliseconds of backtracking.

    Drawing among all of them is uniform, which relabelling and reshuffling
    one base grid is not: that reaches only a third of the grids.
    """
    return tuple(complete("." * 16))


def blank_cells(solution: str, rng: np.random.Generator) -> str:
    """``solution`` with 4 to 8 random cells replaced by '.'."""
    count = int(rng.integers(BLANKS_MIN, BLANKS_MAX + 1))
    blanks = {int(i) for i in rng.choice(len(solution), size=count, replace=False)}
    return "".join("." if i in blanks else cell for i, cell in enumerate(solution))


def show(cells: str) -> str:
    """The 16 cells as 4 rows separated by '/'.

    >>> show("12.43..2....4321")
    '12.4/3..2/..../4321'
    """
    return "/".join(cells[i : i + 4] for i in range(0, 16, 4))


class SudokuEnv(TextEnv):
    """A 4x4 puzzle with 4 to 8 blanks; the action is the solved grid."""

    task = "sudoku"
    budget = 24
    max_turns = 1
    reward_name = "sudoku"

    def _draw(self) -> Problem:
        grids = all_grids()
        solution = grids[int(self.np_random.integers(len(grids)))]
        puzzle = blank_cells(solution, self.np_random)
        return SudokuProblem(
            key=f"sudoku:{puzzle}",
            prompt=f"Sudoku {show(puzzle)}",
            answer=puzzle,
            solution=solution,
        )

    def _step(self, action: str) -> str | None:
        return None  # every action is the final answer

    def expert_action(self, rng: np.random.Generator) -> str:
        """The grid the puzzle was cut from, as 16 digits."""
        problem = self._require_active()
        assert isinstance(problem, SudokuProblem)
        return problem.solution
