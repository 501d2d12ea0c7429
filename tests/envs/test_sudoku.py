"""Tests particular to the sudoku env ("k2rl/Sudoku-v0").

The checks every env must pass are in test_contract.py.
"""

from __future__ import annotations

from envs.sudoku import SudokuEnv, all_grids
from rewards.logic import sudoku


def test_sudoku_draws_from_all_288_grids() -> None:
    grids = all_grids()
    assert len(set(grids)) == 288
    assert sudoku(list(grids), list(grids)) == [1.0] * 288


def test_sudoku_puzzle_is_cut_from_its_solution() -> None:
    env = SudokuEnv()
    for seed in range(50):
        prompt, _ = env.reset(seed=seed)
        puzzle, solution = env.problem.answer, env.problem.solution
        assert prompt == "Sudoku " + "/".join(puzzle[i : i + 4] for i in range(0, 16, 4))
        assert 4 <= puzzle.count(".") <= 8
        assert all(p in (".", s) for p, s in zip(puzzle, solution))


def test_sudoku_grid_with_separators_is_right() -> None:
    env = SudokuEnv()
    env.reset(seed=1)
    grid = env.problem.solution
    assert env.step("/".join(grid[i : i + 4] for i in range(0, 16, 4)))[1] == 1.0
