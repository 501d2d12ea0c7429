"""A dataset as an environment ("k2rl/Dataset-v0"): one prompt a row, scored by a named verifier.

Users train on their own data without writing a class: the task's `kwargs` in the config say

    files          JSONL, JSON, Parquet or CSV file(s), or a folder saved with `datasets`
    prompt_field   the row's prompt text ("prompt")
    answer_field   what the verifier checks it against ("answer")
    verifier       a verifier name from rewards/: math_equiv, exact_match, multiple_choice,
                   exact_int, unit_tests, instruction_following, ...
    system         an optional system prompt, sent as the conversation's system message
    budget         the token budget of a reply (256)
    eval_files     the held-out rows in their own file(s); without them a row is held out by a
                   hash of `key_field` (the prompt by default), about 10% of rows
    task           the task name in metrics ("dataset")

Rows are read with the `datasets` library. A row without a string prompt or with no answer is
one error naming the file and the row; duplicate prompts count once, and a prompt that appears
in both the training and the held-out files is dropped from training, so held out stays held
out. The episode is one reply. Text spaces are sized by the data, not ASCII-512.
"""
from __future__ import annotations

import functools
import string
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from envs.base import Problem, TextEnv, split_of
from rewards import get_reward

FORMATS = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv"}


class DatasetError(ValueError):
    """A dataset that cannot be used; the message names the file (and row)."""


def read_rows(files: str | list[str]) -> list[tuple[str, int, dict]]:
    """(file, row number from 1, row) for every row of `files`."""
    import datasets

    datasets.disable_progress_bars()
    out = []
    for name in [files] if isinstance(files, str) else list(files):
        path = Path(name).expanduser()
        if not path.exists():
            raise DatasetError(f"dataset file {path} does not exist")
        if path.is_dir():
            table = datasets.load_from_disk(str(path))
        elif path.suffix in FORMATS:
            table = datasets.load_dataset(FORMATS[path.suffix], data_files=str(path),
                                          split="train")
        else:
            raise DatasetError(f"dataset file {path} is not JSONL, JSON, Parquet or CSV "
                               f"(or a folder saved with `datasets`)")
        out += [(str(path), i, row) for i, row in enumerate(table, start=1)]
    return out


def problems(rows: list[tuple[str, int, dict]], prompt_field: str, answer_field: str,
             key_field: str | None) -> list[Problem]:
    """One Problem per distinct prompt, checked row by row."""
    seen: dict[str, Problem] = {}
    for path, n, row in rows:
        prompt, answer = row.get(prompt_field), row.get(answer_field)
        if not isinstance(prompt, str) or not prompt.strip():
            raise DatasetError(f"row {n} of {path} has no text in its prompt field "
                               f"{prompt_field!r} (fields: {', '.join(row)})")
        if answer is None or answer == "":
            raise DatasetError(f"row {n} of {path} has no answer in field {answer_field!r} "
                               f"(fields: {', '.join(row)})")
        key = str(row.get(key_field, prompt)) if key_field else prompt
        seen.setdefault(prompt, Problem(key=f"dataset:{key}", prompt=prompt, answer=answer))
    return list(seen.values())


def _tuple(files: str | list[str] | None) -> tuple[str, ...]:
    return () if not files else (files,) if isinstance(files, str) else tuple(files)


@functools.lru_cache(maxsize=16)
def load_splits(files: tuple[str, ...], prompt_field: str, answer_field: str,
                eval_files: tuple[str, ...], key_field: str | None) -> dict[str, list[Problem]]:
    """The train and eval problems of a dataset, read once per process (a rollout makes K
    environments per prompt)."""
    train = problems(read_rows(list(files)), prompt_field, answer_field, key_field)
    if eval_files:
        held = problems(read_rows(list(eval_files)), prompt_field, answer_field, key_field)
        held_prompts = {p.prompt for p in held}
        splits = {"train": [p for p in train if p.prompt not in held_prompts], "eval": held}
    else:
        splits = {s: [p for p in train if split_of(p.key) == s] for s in ("train", "eval")}
    for split, rows in splits.items():
        if not rows:
            raise DatasetError(f"dataset {', '.join(files)} has no {split} rows")
    return splits


@functools.lru_cache(maxsize=16)
def prompt_space(files: tuple[str, ...], prompt_field: str, answer_field: str,
                 eval_files: tuple[str, ...], key_field: str | None) -> tuple[int, str]:
    """(longest prompt, every character the prompts use, with printable ASCII) of a dataset."""
    splits = load_splits(files, prompt_field, answer_field, eval_files, key_field)
    texts = [p.prompt for rows in splits.values() for p in rows]
    return max(map(len, texts)), "".join(sorted(set(string.printable).union(*texts)))


class DatasetEnv(TextEnv):
    """One reply to a dataset row's prompt, scored by the configured verifier."""

    max_turns = 1

    def __init__(self, files: str | list[str], prompt_field: str = "prompt",
                 answer_field: str = "answer", verifier: str = "math_equiv",
                 system: str | None = None, budget: int = 256,
                 eval_files: str | list[str] | None = None, key_field: str | None = None,
                 task: str = "dataset", render_mode: str | None = None) -> None:
        super().__init__(render_mode)
        try:
            get_reward(verifier)
        except KeyError as e:
            raise DatasetError(f"dataset verifier: {e.args[0]}") from None
        self.task, self.budget, self.reward_name, self.system = task, budget, verifier, system
        source = (_tuple(files), prompt_field, answer_field, _tuple(eval_files), key_field)
        self.splits = load_splits(*source)
        longest, charset = prompt_space(*source)  # sized by the data, not ASCII-512
        self.observation_space = gymnasium.spaces.Text(longest, min_length=0, charset=charset)
        self.action_space = gymnasium.spaces.Text(4 * budget, min_length=0, charset=charset)

    def _draw_in(self, split: str) -> Problem:
        rows = self.splits[split]
        return rows[int(self.np_random.integers(len(rows)))]

    def _step(self, action: str) -> str | None:
        return None  # one reply: the answer

    def _info(self) -> dict[str, Any]:
        return {**super()._info(), **({"system": self.system} if self.system else {})}

    def expert_action(self, rng: np.random.Generator) -> str:
        """The row's answer (for `k2rl envs check` and PTX-style demonstrations)."""
        return str(self.problem.answer)
