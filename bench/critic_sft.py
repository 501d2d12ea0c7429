"""Critic SFT on a real model (issue 49): `k2rl critic train` on SmolLM2-135M-Instruct with
generated preference pairs, held-out accuracy per kind before and after.

    python bench/critic_sft.py                      # 3,000 training pairs, 150 held out
    python bench/critic_sft.py --train 300 --heldout 60 --out /tmp/sft.json   # a quick look

Pairs come from k2rl/WordSums-v0 (two-digit sums and differences), each a right reply
against a wrong one, both in the styles SmolLM2 writes ("47 + 38 = 85.", then the boxed
answer), in three kinds:
- ``units``: the wrong reply is off by 1-9 (its last digit differs);
- ``tens``: off by 10 or 20 (same last digit, so a last-digit shortcut cannot tell);
- ``unfinished``: the wrong reply restates the question and stops without a result.
Training pairs are train-split problems, held-out pairs eval-split problems (k2rl's split by
problem key: no held-out problem is ever trained on, in either order or phrasing). The critic
sees the request, the two replies and the rubrics (critic.layout chat), never the answer.
Results go to --out (bench/results/critic_sft_smollm2.json).
"""
from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import envs  # noqa: E402,F401  (registers the k2rl environments)
from k2rl.step.heldout import distinct_seeds  # noqa: E402

DEFAULT_OUT = ROOT / "bench" / "results" / "critic_sft_smollm2.json"
KINDS = ("units", "tens", "unfinished")
# How SmolLM2 and chat models write a sum's reply; chosen and rejected share one style.
STYLES = ("{a} {op} {b} = {r}.",
          "{a} {op} {b} = {r}. The answer is \\boxed{{{r}}}.",
          "To find the answer, we compute {a} {op} {b} = {r}.\n\nThe final answer is {r}.",
          "{r}")


def sum_pairs(n: int, split: str, seed: int, rationale: bool = False) -> list[dict]:
    """n pairs over n distinct `split` problems, the kinds in turn; with `rationale`, each
    carries the critic's working to learn before its verdict ("47 + 38 = 85."), which names
    neither response (it is shown in both orders)."""
    import gymnasium
    import numpy as np

    env = gymnasium.make("k2rl/WordSums-v0").unwrapped
    rng = np.random.default_rng(seed)
    rows = []
    for k, s in enumerate(distinct_seeds("k2rl/WordSums-v0", n, seed * 100_000, split)):
        env.reset(seed=s, options={"split": split})
        key = env.problem.key
        op = "-" if "-" in key[1:] else "+"
        x, y = (int(v) for v in key.split(op))
        # A difference as its key writes it (larger first); a sum in the prompt's order.
        a, b = (x, y) if op == "-" else (int(v) for v in re.findall(r"\d+", env.problem.prompt)[:2])
        right = int(env.problem.answer)
        kind = KINDS[k % len(KINDS)]
        style = STYLES[int(rng.integers(len(STYLES)))]
        chosen = style.format(a=a, op=op, b=b, r=right)
        if kind == "unfinished":
            rejected = f"To find the answer, we compute {a} {op} {b}."
        else:
            step = int(rng.integers(1, 10)) if kind == "units" else 10 * int(rng.integers(1, 3))
            wrong = right + step * (1 if right - step < 0 or rng.random() < 0.5 else -1)
            rejected = style.format(a=a, op=op, b=b, r=wrong)
        rows.append({"prompt": env.problem.prompt, "chosen": chosen, "rejected": rejected,
                     "task": f"word_sums/{kind}"}
                    | ({"rationale": f"{a} {op} {b} = {right}."} if rationale else {}))
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="smollm2")
    p.add_argument("--train", type=int, default=3000, help="training pairs (train split)")
    p.add_argument("--heldout", type=int, default=150, help="held-out pairs (eval split)")
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--rationale", action="store_true",
                   help="training pairs carry the working to learn before the verdict")
    p.add_argument("--out", default=str(DEFAULT_OUT))
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, rows in (("train", sum_pairs(args.train, "train", 1, args.rationale)),
                           ("heldout", sum_pairs(args.heldout, "eval", 2))):
            (tmp / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "k2rl", "critic", "train", "--model", args.model,
             "--pairs", str(tmp / "train.jsonl"), "--heldout", str(tmp / "heldout.jsonl"),
             "--out", str(tmp / "model"), "--epochs", str(args.epochs), "--lr", str(args.lr),
             "--batch", str(args.batch), "--log", str(tmp / "train.log")], cwd=ROOT)
        if proc.returncode != 0:
            raise SystemExit(f"k2rl critic train failed ({proc.returncode}); see its output above")
        summary = json.loads((tmp / "model" / "critic_sft.json").read_text())
    out = {"what": "critic SFT from generated preference pairs (k2rl critic train), chat layout",
           "machine": platform.processor() or platform.machine(),
           "wall_seconds": time.perf_counter() - start,
           "pairs": {"kinds": KINDS, "train_split": "train", "heldout_split": "eval",
                     "rationale": args.rationale},
           **summary}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
