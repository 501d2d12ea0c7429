"""Is the judge's accuracy limited by its data or by the model? Judge-only training, offline.

    python bench/judge_probe.py [--model DIR] [--prompts 640] [--steps 300] [--no-rubrics]

Samples K = 8 responses to `--prompts` prompts of each verifiable default family from the
model (vLLM, temperature 1), turns groups with mixed outcomes into labelled pairs as the run
does (`k2rl.self_critique.harvest`), splits them by prompt (`critic.pairs.split_of_pair`), and
trains only the judging skill (AdamW, lr 1e-3, batch 32) on the train pairs, both orders,
laid out as a run lays them out (`k2rl.self_critique.judge_example_ids`). Every `steps // 6` steps it
scores up to 300 held-out pairs with the project's metrics (`critic.evaluate.evaluate_scorer`,
as `k2rl critic eval` does, but reading the verdict from the torch model being trained). No
policy is trained, so nothing limits the judge's step size but the model. `--no-rubrics` drops the
criteria from the judge's prompt (`Q: ... A: ... B: ... Better?`). Writes
bench/results/judge_probe.json (or judge_probe_no_rubrics.json).
"""
import argparse
import collections
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FAMILIES = ("k2rl/Arithmetic-v1", "k2rl/Calculator-v1", "k2rl/Instructions-v0")
HELDOUT_MAX, BATCH, LR, K = 300, 32, 1e-3, 8


def sample_pairs(model_dir: str, prompts: int) -> list:
    from k2rl import engine
    from k2rl.group import Request
    from k2rl.model import load_tokenizer
    from k2rl.rollout import rollout
    from k2rl.self_critique import harvest

    tok = load_tokenizer(model_dir)
    llm = engine.start_engine(model_dir, 512, seed=0)

    def generate(batch, max_tokens, temperatures):
        return engine.generate(llm, batch, max_tokens, temperatures, 1.0)

    pairs = []
    for b in range(0, prompts, 64):
        reqs = [Request(env_id, 10_000 + b + i, None, "train", j * 64 + i, k=K)
                for j, env_id in enumerate(FAMILIES) for i in range(64)]
        pairs += harvest(rollout(reqs, tok, generate, max_len=512))
    return pairs


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", help="model folder (default: the embedded default model)")
    p.add_argument("--prompts", type=int, default=640, help="prompts per family")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--no-rubrics", action="store_true")
    args = p.parse_args()

    from k2rl import engine
    engine.configure_env(2, kv_cache_gib=1)
    import envs  # noqa: F401  (registers the environments)
    from critic.evaluate import evaluate_scorer
    from critic.judge import VERDICTS
    from critic.pairs import judge_examples, split_of_pair
    from critic.rubrics import load_rubrics
    from k2rl.config import Config
    from k2rl.logprobs import collate, token_nll
    from k2rl.model import default_model, load_tokenizer
    from k2rl.self_critique import judge_example_ids, judge_prompt_ids
    from transformers import AutoModelForCausalLM

    model_dir = args.model or str(default_model(Config().model))
    rubrics = [] if args.no_rubrics else load_rubrics()
    t0 = time.time()
    pairs = sample_pairs(model_dir, args.prompts)
    sample_seconds = time.time() - t0
    train = [q for q in pairs if split_of_pair(q) == "train"]
    held = [q for q in pairs if split_of_pair(q) == "heldout"][:HELDOUT_MAX]
    print(f"{len(pairs)} pairs in {sample_seconds:.0f} s: {len(train)} train, {len(held)} "
          f"held-out", flush=True)

    torch.set_num_threads(2)
    torch.manual_seed(0)
    tok = load_tokenizer(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    examples = [judge_example_ids(tok, e["prompt"], e["response"])
                for e in judge_examples(train, rubrics)]
    choices = [tok.convert_tokens_to_ids(v) for v in VERDICTS]

    @torch.no_grad()
    def score(texts: list[str]) -> list[tuple[float, float]]:
        """The scorer `k2rl.self_critique.make_scorer` gives, from the torch model instead of vLLM."""
        model.eval()
        rows = []
        for text in texts:
            ids = torch.tensor([judge_prompt_ids(tok, text)])
            logp = model(ids).logits[0, -1].log_softmax(-1)
            rows.append((logp[choices[0]].item(), logp[choices[1]].item()))
        model.train()
        return rows

    def heldout_accuracy() -> dict:
        result = evaluate_scorer(held, rubrics, score, tie_margin=0.0)
        return {"all": result["accuracy"], "swap_consistency": result["swap_consistency"],
                **{task: m["accuracy"] for task, m in result["by_task"].items()}}

    opt = torch.optim.AdamW(model.parameters(), lr=LR)
    rng = np.random.default_rng(0)
    curve = [{"step": 0, "loss": None, **heldout_accuracy()}]
    print(curve[-1], flush=True)
    for step in range(1, args.steps + 1):
        picks = rng.choice(len(examples), size=BATCH, replace=False)
        loss = token_nll(model, collate([examples[i] for i in picks], tok.pad_token_id))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % max(1, args.steps // 6) == 0:
            curve.append({"step": step, "loss": loss.item(), **heldout_accuracy()})
            print(curve[-1], flush=True)
    name = "judge_probe_no_rubrics.json" if args.no_rubrics else "judge_probe.json"
    out = Path(__file__).parent / "results" / name
    out.write_text(json.dumps({
        "model": model_dir, "rubrics": not args.no_rubrics, "prompts_per_family": args.prompts,
        "pairs": dict(collections.Counter(q.task for q in pairs)), "train_pairs": len(train),
        "heldout_pairs": len(held), "sample_seconds": sample_seconds, "lr": LR, "batch": BATCH,
        "curve": curve, "seconds": time.time() - t0}, indent=1) + "\n")
    print("wrote", out)


if __name__ == "__main__":
    main()
