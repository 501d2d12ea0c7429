"""Judging cost: seconds to rank a step's critic-rewarded groups, by opponents.

Samples real `k2rl/Chat-v1` groups (K responses each) from the embedded default model (the
cached warm-start that `make train` builds, or --model-path), then times `k2rl.step.critic_engine`'s
ranking of them with the generative critic (its working once per question, a check per
response, the verdicts of every comparison in both orders): every pair (K(K-1)/2 comparisons a
group) against `critic.opponents` 4 and 2.

Results go to bench/results/judge.json. Run from the repo root on an otherwise idle machine:

    PYTHONPATH=. .venv/bin/python bench/judge.py            # ~2 min after the model exists
"""
from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "results" / "judge.json"


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--groups", type=int, default=5, help="Chat groups per step (default mix: ~4.6)")
    p.add_argument("--k", type=int, default=8, help="responses per group")
    p.add_argument("--repeats", type=int, default=3, help="timed rankings per setting (median)")
    p.add_argument("--model-path", default=None, help="HF model folder (default: the default model)")
    p.add_argument("--no-prefix-caching", action="store_true",
                   help="engine without vLLM's prefix cache (engine.prefix_caching: false)")
    p.add_argument("--out", type=Path, default=OUT)
    return p.parse_args(argv)


def timed(fn, repeats: int, llm=None) -> float:
    """Median seconds of `fn`; with `llm`, each call starts from an empty prefix cache, as
    each step of a run does (every weight push drops it)."""
    times = []
    for _ in range(repeats):
        if llm is not None:
            llm.reset_prefix_cache()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None) -> dict:
    args = parse_args(argv)
    from k2rl.device import engine

    engine.configure_env(2, kv_cache_gib=1)
    from critic.compare import pairs_in_group
    from critic.rubrics import load_rubrics
    import envs  # noqa: F401  (registers the environments)
    from k2rl.bootstrap.model import default_model
    from k2rl.config import Config
    from k2rl.lm.chat import load_tokenizer
    from k2rl.step.critic_engine import critic_rank_groups, make_critic
    from k2rl.step.group import Request
    from k2rl.step.rollout import rollout

    cfg = Config()
    path = args.model_path or str(default_model(cfg.model))
    tok = load_tokenizer(path)
    caching = not args.no_prefix_caching
    llm = engine.start_engine(path, cfg.engine.max_model_len, seed=0, prefix_caching=caching)

    def gen(prompts, max_tokens, temperatures):
        return engine.generate(llm, prompts, max_tokens, temperatures, 1.0)

    reqs = [Request("k2rl/Chat-v1", 1000 + g, None, "train", g, k=args.k)
            for g in range(args.groups)]
    sampled = rollout(reqs, tok, gen, step=0, max_len=512)
    rubrics = load_rubrics()
    critic = make_critic(llm, tok, cfg.engine.max_model_len)
    rows = []
    for opponents in (None, 4, 2):
        def rank():
            critic_rank_groups(sampled, critic, rubrics, opponents=opponents)
        n = len(pairs_in_group(args.k, opponents))
        rows.append({"opponents": opponents, "comparisons_per_group": n,
                     "seconds_per_step": round(timed(rank, args.repeats, llm), 3)})
        print(f"opponents {str(opponents):>4}: {n:3d} comparisons a group (both orders), "
              f"{rows[-1]['seconds_per_step']:.2f} s for {args.groups} groups", flush=True)
    result = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
              "machine": platform.machine(), "processor": platform.processor(), "model": path,
              "groups": args.groups, "k": args.k, "prefix_caching": caching, "opponents": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")
    return result


if __name__ == "__main__":
    main()
