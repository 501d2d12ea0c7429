"""PTX: a curated set of good samples mixed into every update as a next-token loss (K2).

L = L_RL + β · L_PTX, with L_PTX the mean NLL of the assistant tokens of a batch drawn from the
curated set. The set is JSONL, one sample a line, either
    {"prompt": "...", "response": "..."}                      (one user turn, one reply)
or  {"messages": [{"role": "system"|"user"|"assistant"|"tool", "content": "..."}, ...]}
with the loss on the assistant turns; an assistant turn may carry its calls in the OpenAI/HF
form (`tool_calls`, content null), a tool turn its `tool_call_id` and `name`. Each is laid out
by the model's template (k2rl.lm.chat.conversation_ids): a system prompt it has no role for
folded into the first user turn, the calls in its own form where it has one. A malformed line is reported with its file and number.
`curated_messages` plays the default set from the run's environments' scripted experts (tool
use always on, no flattering chat replies); `write_curated` writes it as such a JSONL file.
`curated_judgments` adds scripted judgments to it (`train.ptx_judgments`), so that the critic's
checks, which the warm-start teaches, are kept under RL as the policy's skills are.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from critic.rubrics import load_rubrics
from envs import TeachesJudging, has_expert
from k2rl.config import DEFAULT_TASKS, ConfigError
from k2rl.lm.chat import conversation_ids
from k2rl.step.critic_demos import critic_demonstration
from k2rl.tasks.make import make_env


def encode_messages(tokenizer, messages: list[dict]) -> tuple[list[int], list[int]]:
    """(ids, mask) of a conversation in the model's chat layout; mask 1 on assistant tokens."""
    return conversation_ids(tokenizer, messages)


def parse_line(line: str, where: str) -> list[dict]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as e:
        raise ConfigError(f"{where} is not valid JSON: {e.msg}") from None
    return to_messages(row, where)


ROLES = ("system", "user", "assistant", "tool")


def _is_message(m: object) -> bool:
    """A chat message: a role and text content, or an assistant's `tool_calls`."""
    if not isinstance(m, dict) or m.get("role") not in ROLES:
        return False
    calls = m.get("tool_calls")
    if m["role"] == "assistant" and isinstance(calls, list) and calls:
        return m.get("content") is None or isinstance(m.get("content"), str)
    return isinstance(m.get("content"), str)


def to_messages(row: object, where: str) -> list[dict]:
    """Chat messages of one sample, in either format; a bad sample names `where` it came from."""
    fields = row if isinstance(row, dict) else {}
    if isinstance(fields.get("prompt"), str) and isinstance(fields.get("response"), str):
        return [{"role": "user", "content": row["prompt"]},
                {"role": "assistant", "content": row["response"]}]
    msgs = row.get("messages") if isinstance(row, dict) else None
    ok = isinstance(msgs, list) and msgs and all(_is_message(m) for m in msgs)
    if not ok or not any(m["role"] == "assistant" for m in msgs):
        raise ConfigError(f"{where} needs prompt and response strings, or messages with role and "
                          "content (or an assistant's tool_calls) and at least one assistant "
                          "turn")
    return msgs


def numbered_ptx(path: str | Path) -> list[tuple[int, list[dict]]]:
    """(line number, conversation) of every sample of a curated JSONL file, checked line by
    line."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"PTX data file {path} (train.ptx_data) does not exist")
    rows = [(n, parse_line(line, f"line {n} of {path}"))
            for n, line in enumerate(path.read_text().splitlines(), start=1) if line.strip()]
    if not rows:
        raise ConfigError(f"PTX data file {path} has no samples")
    return rows


def read_ptx(path: str | Path) -> list[list[dict]]:
    """The conversations of a curated JSONL file, checked line by line."""
    return [msgs for _, msgs in numbered_ptx(path)]


def load_ptx(path: str | Path, tokenizer) -> list[tuple[list[int], list[int]]]:
    """(ids, mask) of every sample of a curated file; a sample the model's template cannot
    lay out is one sentence naming its line."""
    out = []
    for n, msgs in numbered_ptx(path):
        try:
            out.append(encode_messages(tokenizer, msgs))
        except Exception as e:  # noqa: BLE001  (jinja's TemplateError, a raise_exception, ...)
            raise ConfigError(f"line {n} of {path}: the chat template of "
                              f"{tokenizer.name_or_path or 'the model'} cannot lay out its "
                              f"messages ({type(e).__name__}: {e})") from None
    return out


def curated_envs(task_ids: list[str], scripts: dict | None = None) -> list:
    """The tasks' environments whose scripted expert can write curated samples, each set to
    play its best: the tool always used (`tool_rate`), no flattering or self-vouching chat
    reply (`hack_rate`), and the critic's scripts as `scripts` set them where the env has them
    (k2rl.bootstrap.sft.instruction_scripts). An environment without an expert is left out."""
    out = []
    for env_id in task_ids:
        env = make_env(env_id)
        if not has_expert(env) or not hasattr(env, "messages"):
            continue
        for name, best in (("tool_rate", 1.0), ("hack_rate", 0.0), *(scripts or {}).items()):
            if hasattr(env, name):
                setattr(env, name, best)
        out.append(env)
    return out


def curated_messages(task_ids: list[str] | None = None, n: int = 2048,
                     seed: int = 0) -> list[list[dict]]:
    """`n` expert episodes (chat messages) on the training split of `task_ids` (default: the
    default tasks), the environments taken in turn (curated_envs)."""
    task_ids = list(DEFAULT_TASKS) if task_ids is None else task_ids
    envs_ = curated_envs(task_ids)
    if not envs_:
        raise ConfigError(f"train.ptx_beta > 0 without train.ptx_data needs a task whose "
                          f"environment has a scripted expert to write the curated set from; "
                          f"none of {', '.join(task_ids)} has one (give train.ptx_data)")
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        env = envs_[i % len(envs_)]
        env.reset(seed=int(rng.integers(2**31)), options={"split": "train"})
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(env.expert_action(rng))
            done = terminated or truncated
        out.append(env.messages())
    return out


def curated_judgments(tokenizer, task_ids: list[str], n: int, seed: int = 0,
                      scripts: dict | None = None) -> list[tuple[list[int], list[int]]]:
    """(ids, mask) of `n` scripted judgments (k2rl.step.critic_demos.critic_demonstration: the
    expert's answer against a wrong one, the env's own answer, checks and verdict, the loss on
    the critic's turns) on training-split prompts of those tasks whose environment teaches
    judging, taken in turn; none if no task's does. `scripts` (curated_envs) is the layout the
    model was built to judge in, so that these judgments keep it rather than mix in another."""
    envs_ = [env for env in curated_envs(task_ids, scripts) if isinstance(env, TeachesJudging)]
    if not envs_ or n <= 0:
        return []
    rng, rubrics = np.random.default_rng(seed), load_rubrics()
    return [critic_demonstration(envs_[i % len(envs_)], tokenizer, int(rng.integers(2**31)), rng,
                                 rubrics) for i in range(n)]


def write_curated(path: str | Path, task_ids: list[str] | None = None, n: int = 2048,
                  seed: int = 0) -> Path:
    """curated_messages as a PTX JSONL file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"messages": m}) + "\n"
                            for m in curated_messages(task_ids, n, seed)))
    return path
