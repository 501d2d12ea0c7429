"""The judge's skill, teacher-forced: how often a model writes a scripted judgment's lines itself.

For scripted judgments (k2rl.step.critic_demos.critic_demonstration) on held-out ("eval") and
training-split prompts of each family that teaches judging, one forward pass gives the model's
greedy choice at every judge token given the script before it. A check line counts as written
when every one of its tokens is the model's greedy choice (greedy decoding would then write it
exactly), its finding when the tokens after its last ":" are; the verdict likewise. The own
answer is the script's (the right one), so this measures checking and deciding, not solving.

    PYTHONPATH=. .venv/bin/python bench/archive/judge_skill.py [--model DIR] [--n 100] [--out FILE]

Default model: the embedded default's cached build (what `make train` builds). Results go to
bench/archive/results/judge_skill.json (one entry per model, keyed by its path).
"""
from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path

import numpy as np
import torch

OUT = Path(__file__).resolve().parent / "results" / "judge_skill.json"


def runs(mask: list[int]) -> list[tuple[int, int]]:
    """[start, end) of each run of 1s in `mask`.

    >>> runs([0, 1, 1, 0, 1, 0, 1, 1])
    [(1, 3), (4, 5), (6, 8)]
    """
    out, start = [], None
    for i, m in enumerate(mask + [0]):
        if m and start is None:
            start = i
        elif not m and start is not None:
            out.append((start, i))
            start = None
    return out


def skill(model, tokenizer, env, rubrics, split: str, n: int, seed: int) -> dict:
    from k2rl.step.critic_demos import critic_demonstration

    rng = np.random.default_rng(seed)
    colon = tokenizer.convert_tokens_to_ids(":") if ":" in tokenizer.get_vocab() else None
    lines = findings = verdicts = checks = 0
    for _ in range(n):
        ids, mask = critic_demonstration(env, tokenizer, int(rng.integers(2**31)), rng, rubrics,
                                         split=split)
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0]
        greedy = logits.argmax(-1).tolist()  # greedy[i] predicts ids[i + 1]
        right = [greedy[i - 1] == ids[i] for i in range(1, len(ids))]
        turns = runs(mask)
        for k, (a, b) in enumerate(turns):
            ok = all(right[i - 1] for i in range(a, b))
            if k == len(turns) - 1:
                verdicts += ok
                continue
            checks += 1
            lines += ok
            tail = max((i for i in range(a, b) if ids[i] == colon), default=a - 1) + 1
            findings += all(right[i - 1] for i in range(tail, b))
    return {"judgments": n, "check_lines": checks, "line_written": lines / checks,
            "finding_written": findings / checks, "verdict_written": verdicts / n}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=None, help="HF model folder (default: the embedded default)")
    p.add_argument("--n", type=int, default=100, help="judgments per family and split")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)

    import envs  # noqa: F401  (registers the environments)
    from critic.rubrics import load_rubrics
    from k2rl.config import ModelConfig
    from k2rl.bootstrap.model import default_model
    from k2rl.lm.chat import load_tokenizer
    from k2rl.bootstrap.sft import make_critic_envs
    from transformers import AutoModelForCausalLM

    cfg = ModelConfig()
    path = Path(args.model) if args.model else default_model(cfg)
    tokenizer = load_tokenizer(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    rubrics = load_rubrics()
    rows = {}
    for env in make_critic_envs(cfg.default):
        for split in ("eval", "train"):
            row = skill(model, tokenizer, env, rubrics, split, args.n, args.seed)
            rows[f"{env.task}/{split}"] = row
            print(f"{env.task:14s} {split:5s} line {row['line_written']:6.1%}  finding "
                  f"{row['finding_written']:6.1%}  verdict {row['verdict_written']:6.1%}  (n={args.n})",
                  flush=True)
    result = {"model": str(path), "when": datetime.datetime.now().isoformat(timespec="seconds"),
              "n": args.n, "rows": rows}
    old = json.loads(args.out.read_text()) if args.out.exists() else {}
    old[str(path)] = result
    args.out.write_text(json.dumps(old, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
