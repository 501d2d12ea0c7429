"""PTX: a curated set of good samples mixed into every update as a next-token loss (K2).

L = L_RL + β · L_PTX, with L_PTX the mean NLL of the assistant tokens of a batch drawn from the
curated set. The set is JSONL, one sample a line, either
    {"prompt": "...", "response": "..."}                      (one user turn, one reply)
or  {"messages": [{"role": "user"|"assistant"|"tool", "content": "..."}, ...]}
with the loss on the assistant turns. A malformed line is reported with its file and number.
`write_curated` makes a small set from the default environments' experts (tool use always on).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from k2rl.chat import conversation_ids
from k2rl.config import ConfigError


def encode_messages(tokenizer, messages: list[dict]) -> tuple[list[int], list[int]]:
    """(ids, mask) of a conversation in the model's chat layout; mask 1 on assistant tokens."""
    return conversation_ids(tokenizer, messages)


def parse_line(line: str, where: str) -> list[dict]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as e:
        raise ConfigError(f"{where} is not valid JSON: {e.msg}") from None
    return to_messages(row, where)


def to_messages(row: object, where: str) -> list[dict]:
    """Chat messages of one sample, in either format; a bad sample names `where` it came from."""
    fields = row if isinstance(row, dict) else {}
    if isinstance(fields.get("prompt"), str) and isinstance(fields.get("response"), str):
        return [{"role": "user", "content": row["prompt"]},
                {"role": "assistant", "content": row["response"]}]
    msgs = row.get("messages") if isinstance(row, dict) else None
    ok = isinstance(msgs, list) and msgs and all(
        isinstance(m, dict) and m.get("role") in ("user", "assistant", "tool")
        and isinstance(m.get("content"), str) for m in msgs)
    if not ok or not any(m["role"] == "assistant" for m in msgs):
        raise ConfigError(f"{where} needs prompt and response strings, or messages with role and "
                          "content and at least one assistant turn")
    return msgs


def read_ptx(path: str | Path) -> list[list[dict]]:
    """The conversations of a curated JSONL file, checked line by line."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"PTX data file {path} (train.ptx_data) does not exist")
    rows = [parse_line(line, f"line {n} of {path}")
            for n, line in enumerate(path.read_text().splitlines(), start=1) if line.strip()]
    if not rows:
        raise ConfigError(f"PTX data file {path} has no samples")
    return rows


def load_ptx(path: str | Path, tokenizer) -> list[tuple[list[int], list[int]]]:
    return [encode_messages(tokenizer, msgs) for msgs in read_ptx(path)]


def write_curated(path: str | Path, n: int = 512, seed: int = 0) -> Path:
    """A curated set from the default environments' experts, with the tool always used and no
    flattering or self-vouching chat replies."""
    from k2rl.config import ModelConfig
    from k2rl.sft import make_demo_envs

    rng = np.random.default_rng(seed)
    demo_envs = make_demo_envs(ModelConfig(tool_rate=1.0))
    for env in demo_envs:  # curated: the chat expert states the fact and never flatters
        if hasattr(env, "hack_rate"):
            env.hack_rate = 0.0
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        for i in range(n):
            env = demo_envs[i % len(demo_envs)]
            env.reset(seed=int(rng.integers(2**31)), options={"split": "train"})
            done = False
            while not done:
                _, _, terminated, truncated, _ = env.step(env.expert_action(rng))
                done = terminated or truncated
            f.write(json.dumps({"messages": env.messages()}) + "\n")
    return path
