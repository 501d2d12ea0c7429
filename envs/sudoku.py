"""Single-turn 4x4 Sudoku with 2x2 boxes ("k2rl/Sudoku-v1").

The prompt is the puzzle, rows separated by '/' and blanks as '.':
``"Sudoku 12.4/3..2/..../4321"``; the action is the full grid as 16 digits,
``1234341221434321`` (separators are tolerated). The ``sudoku`` verifier
accepts any valid grid that keeps the givens, so the problem's answer is the
puzzle itself.

Every puzzle has exactly one solution, and what is learnt from a puzzle is that
grid, whatever cells were blanked and whatever digits it uses. So the split key is
the solution up to relabelling its digits (written with the first row renamed to
``1234``): the 288 grids fall into 12 such classes, and a held-out class is
never the solution of a training puzzle under any blanking or relabelling (v0
keyed the puzzle, and held-out puzzles were cut from the grids of training ones).
With 12 classes the held-out side is one class: 24 grids, thousands of puzzles.
The problem's key (its prompt_id) is the puzzle up to the same relabelling, so
held-out evaluation counts distinct puzzles of that class.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from envs.base import Problem, TextEnv
from rewards.logic import SUDOKU_DIGITS, sudoku_units

BLANKS_MIN, BLANKS_MAX = 4, 8
MAX_TRIES = 1_000  # blankings of a grid until the puzzle has a unique solution


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


def relabelled(grid: str, cells: str | None = None) -> str:
    """``cells`` (default: ``grid`` itself) with the digits renamed so that the solution
    ``grid``'s first row reads 1234: one representative of each class of grids (or puzzles)
    that differ only by their digits' names; blanks stay blank.

    >>> relabelled("4321214334121234"), relabelled("1234341221434321")
    ('1234341221434321', '1234341221434321')
    >>> relabelled("4321214334121234", "43.1....3412123.")
    '12.4....2143432.'
    """
    names = {digit: str(i + 1) for i, digit in enumerate(grid[:4])} | {".": "."}
    return "".join(names[cell] for cell in (grid if cells is None else cells))


def show(cells: str) -> str:
    """The 16 cells as 4 rows separated by '/'.

    >>> show("12.43..2....4321")
    '12.4/3..2/..../4321'
    """
    return "/".join(cells[i : i + 4] for i in range(0, 16, 4))


class SudokuEnv(TextEnv):
    """A 4x4 puzzle with 4 to 8 blanks and one solution; the action is the solved grid."""

    task = "sudoku"
    budget = 24
    max_turns = 1
    reward_name = "sudoku"

    def _draw(self) -> Problem:
        grids = all_grids()
        solution = grids[int(self.np_random.integers(len(grids)))]
        for _ in range(MAX_TRIES):
            puzzle = blank_cells(solution, self.np_random)
            if len(complete(puzzle)) == 1:  # about 7% of blankings leave several solutions
                break
        else:
            raise RuntimeError(f"no puzzle with one solution in {MAX_TRIES} blankings")
        return SudokuProblem(
            key=f"sudoku:{relabelled(solution, puzzle)}",  # the puzzle up to its digits' names
            split_key=f"sudoku:{relabelled(solution)}",
            prompt=f"Sudoku {show(puzzle)}",
            answer=puzzle,
            solution=solution,
        )

    def expert_action(self, rng: np.random.Generator) -> str:
        """The grid the puzzle was cut from, as 16 digits."""
        problem = self._require_active()
        assert isinstance(problem, SudokuProblem)
        return problem.solution
