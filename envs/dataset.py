"""A dataset as an environment ("k2rl/Dataset-v0"): one prompt a row, scored by a named verifier.

Users train on their own data without writing a class: the task's `kwargs` in the config say

    files          JSONL, JSON, Parquet or CSV file(s), or a folder saved with `datasets`
    prompt_field   the row's prompt ("prompt"): a text, or a chat `messages` list of
                   {"role", "content"} ending with a user message
    answer_field   what the verifier checks it against ("answer")
    verifier       a verifier name from rewards/: math_equiv, exact_match, multiple_choice,
                   exact_int, unit_tests, instruction_following, ...
    system         an optional system prompt, sent as the conversation's system message
    budget         the token budget of a reply (256)
    answer_format  where the verifier finds the final answer: auto (the default: the last
                   box, an <answer> tag, "#### x", "the answer is x", the last line), boxed,
                   tag, gsm8k, last_number or bare (rewards.extract)
    eval_files     the held-out rows in their own file(s); without them a row is held out by a
                   hash of `key_field` (the prompt by default), about 10% of rows
    task           the task name in metrics ("dataset")
    too_long       what to do with a prompt longer than `max_prompt_tokens` tokens of
                   `tokenizer`'s chat template: "skip" it (counted in `skipped`) or "error"
    tokenizer, max_prompt_tokens
                   set by `k2rl train` from the model and `engine.max_model_len` minus the
                   budget, so a prompt the engine could not take is found when the data loads

Rows are read with the `datasets` library. A row without a prompt (text, or messages ending
with a user turn) or with no answer is one error naming the file and the row; a `messages`
prompt is shown as its last user message after the turns before it (`info["context"]`);
duplicate prompts count once, and a prompt that appears in both the training and the held-out
files is dropped from training, so held out stays held out. The episode is one reply. Text
spaces are sized by the data, not ASCII-512.
"""
from __future__ import annotations

import functools
import json
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np

from envs.base import ANSWER_FORMATS, Problem, TextEnv, split_of
from rewards import get_reward

FORMATS = {".jsonl": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv"}


class DatasetError(ValueError):
    """A dataset that cannot be used; the message names the file (and row)."""


def read_jsonl(path: Path) -> list[tuple[str, int, dict]]:
    """(file, line number, row) for every non-blank line of a JSONL file; a line that is not
    a JSON object is one sentence naming the file and the line (`datasets` names neither)."""
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise DatasetError(f"line {n} of {path} is not valid JSON: {e.msg} "
                                   f"(column {e.colno})") from None
            if not isinstance(row, dict):
                raise DatasetError(f"line {n} of {path} is not a JSON object")
            out.append((str(path), n, row))
    return out


def read_rows(files: str | list[str]) -> list[tuple[str, int, dict]]:
    """(file, row number from 1, row) for every row of `files` (for JSONL, the line number)."""
    import datasets

    datasets.disable_progress_bars()
    out = []
    for name in [files] if isinstance(files, str) else list(files):
        path = Path(name).expanduser()
        if not path.exists():
            raise DatasetError(f"dataset file {path} does not exist")
        if path.suffix == ".jsonl" and path.is_file():
            out += read_jsonl(path)
            continue
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


ROLES = ("system", "user", "assistant", "tool")


@dataclass(frozen=True)
class Row(Problem):
    """A dataset problem: `prompt` is the last user message, `context` the turns before it."""

    context: tuple = ()
    source: str = ""  # "row N of FILE", for errors
    identity: str = ""  # the whole prompt conversation as text: what makes rows the same


def as_conversation(prompt: Any, where: str, field: str) -> tuple[tuple, str]:
    """(turns before the last user message, its text) of a text or `messages` prompt."""
    if isinstance(prompt, str) and prompt.strip():
        return (), prompt
    if isinstance(prompt, list) and prompt:
        for i, m in enumerate(prompt):
            if not (isinstance(m, dict) and m.get("role") in ROLES
                    and isinstance(m.get("content"), str)):
                raise DatasetError(f"{where}: message {i} of its prompt field {field!r} is not "
                                   f"{{'role': one of {', '.join(ROLES)}, 'content': text}}")
        if prompt[-1]["role"] == "user" and prompt[-1]["content"].strip():
            context = tuple({"role": m["role"], "content": m["content"]} for m in prompt[:-1])
            return context, prompt[-1]["content"]
        raise DatasetError(f"{where}: its prompt messages in {field!r} do not end with a user "
                           "message that has text")
    raise DatasetError(f"{where} has no text or messages in its prompt field {field!r}")


def problems(rows: list[tuple[str, int, dict]], prompt_field: str, answer_field: str,
             key_field: str | None) -> list[Row]:
    """One Row per distinct prompt, checked row by row."""
    seen: dict[str, Row] = {}
    for path, n, row in rows:
        where = f"{'line' if path.endswith('.jsonl') else 'row'} {n} of {path}"
        if prompt_field not in row:
            raise DatasetError(f"{where} has no prompt field {prompt_field!r} "
                               f"(fields: {', '.join(row)})")
        context, text = as_conversation(row[prompt_field], where, prompt_field)
        answer = row.get(answer_field)
        if answer is None or answer == "":
            raise DatasetError(f"{where} has no answer in field {answer_field!r} "
                               f"(fields: {', '.join(row)})")
        identity = json.dumps([*context, text], ensure_ascii=False) if context else text
        key = str(row.get(key_field, identity)) if key_field else identity
        seen.setdefault(identity, Row(key=f"dataset:{key}", prompt=text, answer=answer,
                                      context=context, source=where, identity=identity))
    return list(seen.values())


def _tuple(files: str | list[str] | None) -> tuple[str, ...]:
    return () if not files else (files,) if isinstance(files, str) else tuple(files)


@functools.lru_cache(maxsize=16)
def load_splits(files: tuple[str, ...], prompt_field: str, answer_field: str,
                eval_files: tuple[str, ...], key_field: str | None) -> dict[str, list[Row]]:
    """The train and eval problems of a dataset, read once per process (a rollout makes K
    environments per prompt)."""
    train = problems(read_rows(list(files)), prompt_field, answer_field, key_field)
    if eval_files:
        held = problems(read_rows(list(eval_files)), prompt_field, answer_field, key_field)
        held_ids = {p.identity for p in held}
        splits = {"train": [p for p in train if p.identity not in held_ids],
                  "eval": held}
    else:
        splits = {s: [p for p in train if split_of(p.key) == s] for s in ("train", "eval")}
    for split, rows in splits.items():
        if not rows:
            raise DatasetError(f"dataset {', '.join(files)} has no {split} rows")
    return splits


@functools.lru_cache(maxsize=4)
def _tokenizer(path: str):
    """The model's tokenizer, loaded as transformers loads it (envs/ imports nothing from the
    engine; k2rl's own folders load the same way, k2rl.bootstrap.model.build_tokenizer)."""
    from transformers import AutoTokenizer  # heavy: only a length-guarded dataset needs it

    return AutoTokenizer.from_pretrained(path)


def prompt_tokens(row: Row, system: str | None, tokenizer) -> int:
    """Tokens of the row's prompt as the engine gets it: the chat template's rendering, ending
    where the assistant's reply begins (as k2rl.lm.chat.prompt_ids encodes it). A template that
    rejects a system or tool turn (Gemma's) is given them as k2rl.lm.chat.adapt lays them out:
    the system prompt folded into the first user turn, tool results as user turns."""
    head = [{"role": "system", "content": system}] if system and not any(
        m["role"] == "system" for m in row.context) else []
    messages = [*head, *row.context, {"role": "user", "content": row.prompt}]
    try:
        return _rendered_tokens(tokenizer, messages)
    except Exception:  # noqa: BLE001  (jinja's TemplateError, or a template's raise_exception)
        pass
    try:
        return _rendered_tokens(tokenizer, folded(messages))
    except Exception as e:  # jinja's TemplateError, or a template's raise_exception
        name = getattr(tokenizer, "name_or_path", "") or "the model"
        raise DatasetError(f"{row.source}: the chat template of {name} cannot lay out its "
                           f"messages ({type(e).__name__}: {e})") from None


def _rendered_tokens(tokenizer, messages: list[dict]) -> int:
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return len(tokenizer.encode(text, add_special_tokens=False))


def folded(messages: list[dict]) -> list[dict]:
    """`messages` with a system prompt folded into the first user turn and tool results as
    user turns, as k2rl.lm.chat.adapt sends them to a template without those roles (envs/ does
    not import the engine).

    >>> folded([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])
    [{'role': 'user', 'content': 'Be brief.\\n\\nHi'}]
    """
    out, system = [], None
    for m in messages:
        if m["role"] == "system":
            system = m["content"]
            continue
        m = {"role": "user" if m["role"] == "tool" else m["role"], "content": m["content"]}
        if system is not None and m["role"] == "user":
            m, system = {**m, "content": f"{system}\n\n{m['content']}"}, None
        out.append(m)
    return out


@functools.lru_cache(maxsize=16)
def fitting(source: tuple, system: str | None, tokenizer: str, max_tokens: int, too_long: str
            ) -> tuple[dict[str, list[Row]], dict[str, int]]:
    """The splits of `source` (load_splits' arguments) without the prompts longer than
    `max_tokens`, and how many were skipped per split; with too_long="error" the first such
    prompt is an error naming its row. Read once per process, like load_splits."""
    splits, tok, kept, skipped = load_splits(*source), _tokenizer(tokenizer), {}, {}
    for split, rows in splits.items():
        kept[split] = []
        for row in rows:
            n = prompt_tokens(row, system, tok)
            if n <= max_tokens:
                kept[split].append(row)
            elif too_long == "error":
                raise DatasetError(f"{row.source}: its prompt is {n} tokens, more than the "
                                   f"{max_tokens} that fit engine.max_model_len with the reply "
                                   "budget; shorten it, raise engine.max_model_len, or give the "
                                   "task too_long: skip")
        skipped[split] = len(rows) - len(kept[split])
        if not kept[split]:
            raise DatasetError(f"every {split} prompt of the dataset is longer than "
                               f"{max_tokens} tokens (engine.max_model_len minus the budget)")
    return kept, skipped


@functools.lru_cache(maxsize=16)
def prompt_space(files: tuple[str, ...], prompt_field: str, answer_field: str,
                 eval_files: tuple[str, ...], key_field: str | None) -> tuple[int, str]:
    """(longest prompt, every character the prompts use, with printable ASCII) of a dataset."""
    splits = load_splits(files, prompt_field, answer_field, eval_files, key_field)
    texts = [m["content"] for rows in splits.values() for p in rows for m in p.context]
    texts += [p.prompt for rows in splits.values() for p in rows]
    return max(map(len, texts)), "".join(sorted(set(string.printable).union(*texts)))


class DatasetEnv(TextEnv):
    """One reply to a dataset row's prompt, scored by the configured verifier."""

    max_turns = 1

    def __init__(self, files: str | list[str], prompt_field: str = "prompt",
                 answer_field: str = "answer", verifier: str = "math_equiv",
                 system: str | None = None, budget: int = 256,
                 eval_files: str | list[str] | None = None, key_field: str | None = None,
                 task: str = "dataset", too_long: str = "skip", tokenizer: str | None = None,
                 max_prompt_tokens: int | None = None, answer_format: str = "auto",
                 render_mode: str | None = None) -> None:
        super().__init__(render_mode)
        try:
            get_reward(verifier)
        except KeyError as e:
            raise DatasetError(f"dataset verifier: {e.args[0]}") from None
        if answer_format not in ANSWER_FORMATS:
            raise DatasetError(f"dataset answer_format must be one of {ANSWER_FORMATS}, got "
                               f"{answer_format!r}")
        self.answer_format = answer_format
        if too_long not in ("skip", "error"):
            raise DatasetError(f"too_long must be skip or error, got {too_long!r}")
        self.task, self.budget, self.reward_name, self.system = task, budget, verifier, system
        source = (_tuple(files), prompt_field, answer_field, _tuple(eval_files), key_field)
        self.splits = load_splits(*source)
        self.skipped = {"train": 0, "eval": 0}  # prompts too long for the engine, per split
        if tokenizer and max_prompt_tokens:
            self.splits, self.skipped = fitting(source, system, tokenizer, max_prompt_tokens,
                                                too_long)
        longest, charset = prompt_space(*source)  # sized by the data, not ASCII-512
        self.observation_space = gymnasium.spaces.Text(longest, min_length=0, charset=charset)
        self.action_space = gymnasium.spaces.Text(4 * budget, min_length=0, charset=charset)

    def _draw_in(self, split: str) -> Row:
        rows = self.splits[split]
        return rows[int(self.np_random.integers(len(rows)))]

    def _info(self) -> dict[str, Any]:
        """The base info, with the system prompt and the turns before the user's message."""
        info = super()._info()
        if self.system:
            info["system"] = self.system
        if self.problem.context:
            info["context"] = [dict(m) for m in self.problem.context]
        return info

    def expert_action(self, rng: np.random.Generator) -> str:
        """The row's answer (for `k2rl envs check` and PTX-style demonstrations)."""
        return str(self.problem.answer)
