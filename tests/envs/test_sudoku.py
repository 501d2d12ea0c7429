"""Tests particular to the sudoku env ("k2rl/Sudoku-v1").

The checks every env must pass are in test_contract.py.
"""

from __future__ import annotations

import itertools

from envs.base import split_of
from envs.sudoku import SudokuEnv, all_grids, complete, relabelled
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
        assert complete(puzzle) == [solution]  # one solution


def test_sudoku_splits_on_the_solution_up_to_relabelling_and_keys_the_puzzle() -> None:
    grid = all_grids()[100]
    renamed = {grid.translate(str.maketrans("1234", "".join(p)))
               for p in itertools.permutations("1234")}
    assert len(renamed) == 24 and {relabelled(g) for g in renamed} == {relabelled(grid)}
    classes = {relabelled(g) for g in all_grids()}
    assert len(classes) == 12 and all(c.startswith("1234") for c in classes)
    # One class of 12 is held out: 24 grids.
    assert sum(split_of(f"sudoku:{c}") == "eval" for c in classes) == 1
    env = SudokuEnv()
    for seed in range(50):
        _, info = env.reset(seed=seed, options={"split": "eval" if seed % 2 else "train"})
        assert env.problem.split_key == f"sudoku:{relabelled(env.problem.solution)}"
        puzzle = env.problem.answer  # the same puzzle under other digit names: the same key
        assert info["prompt_id"] == f"sudoku:{relabelled(env.problem.solution, puzzle)}"
        assert info["prompt_id"].count(".") == puzzle.count(".")


def test_sudoku_grid_with_separators_is_right() -> None:
    env = SudokuEnv()
    env.reset(seed=1)
    grid = env.problem.solution
    assert env.step("/".join(grid[i : i + 4] for i in range(0, 16, 4)))[1] == 1.0
