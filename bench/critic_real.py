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
"""
from __future__ import annotations

import argparse
import json
import platform
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


def main() -> None:
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
