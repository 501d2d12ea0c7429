"""The policy as critic on a real chat model: `k2rl critic eval --model` in the chat layout on
held-out arithmetic pairs, at the start and on a run's checkpoints (issue 49).

    python bench/critic_real.py                                  # SmolLM2-135M-Instruct
    python bench/critic_real.py --model runs/NAME/checkpoints/step-00018 --model smollm2
    python bench/critic_real.py --pairs 40 --out critic.json

Pairs: `--pairs` distinct eval-split problems of k2rl/WordSums-v0 (held out from every run's
training), each a right reply against one off by 1 to 11, both in the style SmolLM2 writes
them ("47 + 38 = 85."). The critic sees the request, the two replies and the rubrics, never the
answer (critic.layout chat). Each model is judged by `k2rl critic eval --json` in a child
process (its own engine); the result per model (accuracy in each order, order consistency,
ties, Brier) goes to `--out` (bench/results/critic_real_smollm2.json) with three judgments
shown, so the figures can be read against what the critic wrote.

Critic SFT (`k2rl critic train`, K2's initialisation of the critic) on the same model:

    python bench/critic_real.py sft                   # 3,000 training pairs, 150 held out
    python bench/critic_real.py sft --train 1500 --rationale --out critic_sft.json

Its pairs come from k2rl/WordSums-v0, each a right reply against a wrong one in the styles
SmolLM2 writes, in three kinds: ``units`` (off by 1-9), ``tens`` (off by 10 or 20: the same
last digit) and ``unfinished`` (the reply restates the question and stops). Training pairs are
train-split problems, held-out pairs eval-split ones (split by problem key: no held-out problem
is trained on, in any order or phrasing). `--rationale` gives each training pair the critic's
working to learn before its verdict ("47 + 38 = 85."). Results: --out
(bench/results/critic_sft_smollm2*.json).
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

DEFAULT_OUT = ROOT / "bench" / "results" / "critic_real_smollm2.json"


def arithmetic_pairs(n: int, seed: int = 0) -> list[dict]:
    """n held-out word sums, each "a op b = right." against "a op b = wrong." (off by 1-11)."""
    import gymnasium
    import numpy as np

    env = gymnasium.make("k2rl/WordSums-v0").unwrapped
    rng = np.random.default_rng(seed)
    rows = []
    for s in distinct_seeds("k2rl/WordSums-v0", n, 0):
        env.reset(seed=s, options={"split": "eval"})
        a, op, b = _operands(env.problem.key, env.problem.prompt)
        right = int(env.problem.answer)
        wrong = right + int(rng.choice([-1, 1])) * int(rng.integers(1, 12))
        rows.append({"prompt": env.problem.prompt, "chosen": f"{a} {op} {b} = {right}.",
                     "rejected": f"{a} {op} {b} = {wrong}.", "task": "word_sums"})
    return rows


def _operands(key: str, prompt: str) -> tuple[int, str, int]:
    """The two numbers in the order the prompt names them, and the operation."""
    import re

    x, y = (int(v) for v in re.findall(r"\d+", prompt)[:2])
    return x, ("-" if "-" in key and not key.startswith("-") else "+"), y


def critic_eval(model: str, pairs: Path, log: Path) -> dict:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "k2rl", "critic", "eval", "--model", model,
                           "--pairs", str(pairs), "--json", "--show", "3", "--log", str(log)],
                          cwd=ROOT, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        raise SystemExit(f"k2rl critic eval --model {model} failed: {proc.stderr[-2000:]}")
    out = proc.stdout
    cut = out.index("\n\n[1]") if "\n\n[1]" in out else len(out)
    result = json.loads(out[out.index("{"):cut])
    return {"model": model, "seconds": time.perf_counter() - start,
            **{k: result[k] for k in ("n", "accuracy", "accuracy_ab", "accuracy_ba",
                                       "swap_consistency", "tie_rate", "brier", "ece")},
            "shown": out[cut:].strip()}


SFT_OUT = ROOT / "bench" / "results" / "critic_sft_smollm2.json"
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


def sft_main(argv: list[str]) -> None:
    """`sft`: k2rl critic train on generated sum pairs, held-out accuracy per kind."""
    p = argparse.ArgumentParser(prog="critic_real.py sft", description=sft_main.__doc__)
    p.add_argument("--model", default="smollm2")
    p.add_argument("--train", type=int, default=3000, help="training pairs (train split)")
    p.add_argument("--heldout", type=int, default=150, help="held-out pairs (eval split)")
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--rationale", action="store_true",
                   help="training pairs carry the working to learn before the verdict")
    p.add_argument("--out", default=str(SFT_OUT))
    args = p.parse_args(argv)
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


def main() -> None:
    if sys.argv[1:2] == ["sft"]:
        return sft_main(sys.argv[2:])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", action="append", help="model folder, GGUF or `smollm2` "
                   "(repeatable; default smollm2)")
    p.add_argument("--pairs", type=int, default=100, help="distinct held-out problems")
    p.add_argument("--out", default=str(DEFAULT_OUT))
    args = p.parse_args()
    rows = arithmetic_pairs(args.pairs)
    with tempfile.TemporaryDirectory() as tmp:
        pairs = Path(tmp) / "pairs.jsonl"
        pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
        results = [critic_eval(m, pairs, Path(tmp) / f"eval{i}.log")
                   for i, m in enumerate(args.model or ["smollm2"])]
    out = {"pairs": {"n": len(rows), "task": "word_sums", "split": "eval",
                     "kind": "right reply against one off by 1-11, the model's style"},
           "layout": "chat", "machine": platform.processor() or platform.machine(),
           "results": results}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    for r in results:
        print(f"{r['model']}: accuracy {r['accuracy']:.3f} (A/B {r['accuracy_ab']:.3f}, B/A "
              f"{r['accuracy_ba']:.3f}), consistency {r['swap_consistency']:.3f}, ties "
              f"{r['tie_rate']:.3f}, Brier {r['brier']:.3f}, n {r['n']}, {r['seconds']:.0f} s")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
