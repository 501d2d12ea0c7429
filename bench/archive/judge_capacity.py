"""Probe: is the default judge's instruction family capped by the default model's size?

The instruction checks of the 3.4 M-parameter default stay at chance through every layout tried
(bench/archive/notebook.md, "Two more instruction check layouts"). This probe builds the default recipe
(recipe 11: the warm-start, then the 200-step judging phase, the same data mixture, steps, batch
and schedule) at larger sizes, which a 2-core CPU cannot build inside `make train`'s time, and
measures each build before any RL:

- the judge on a fixed file of held-out pairs (`critic.evaluate.evaluate_critic`, the same
  layout and the same three generate/score uses as `k2rl critic eval`), per task, with the
  checks' findings;
- the policy's greedy held-out accuracy over the default tasks' distinct eval problems.

Generation and verdict scores come from the Hugging Face model itself (`hf_generate`,
`hf_score`: batched, left-padded, greedy), not vLLM, so the probe runs on a GPU machine that
has torch and transformers only. `--model DIR` measures an existing build the same way (the
CPU-built default, to tie these figures to the vLLM path's).

    PYTHONPATH=. python bench/archive/judge_capacity.py --pairs bench/results/heldout_pairs_judge_corr.jsonl \
        --size mid --device cuda --out results.json
    PYTHONPATH=. python bench/archive/judge_capacity.py --pairs ... --model ~/.cache/k2rl/models/qwen2-char-X
    PYTHONPATH=. python bench/archive/judge_capacity.py --pairs ... --size default \
        --start ~/.cache/k2rl/models/qwen2-char-3b0a00d8ebfe --judge-steps 1500 [--save DIR]
    PYTHONPATH=. python bench/archive/judge_capacity.py --pairs ... --size default --judge-steps 0 --save W

`--start` continues a warm-started build (recipe 11's, before its judging phase) for a judging
phase of `--judge-steps` (0: the warm-start alone); `--save DIR` keeps the model; `--judgments F`
writes every judgment, with the judge's own working, to F. The instruction checks are the env's
own (envs/instructions.py): `--instr-bounds` and `--misspell-rate` set their options (the
"local" layout this probe once patched in is `--instr-bounds`).

Results: bench/archive/results/judge_capacity.json (one entry per model measured).
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import json
import multiprocessing
import re
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import torch


OUT = Path(__file__).resolve().parent / "results" / "judge_capacity.json"


SIZES = {  # Qwen2 shapes; "default" is model.default's own
    "default": dict(hidden_size=256, num_layers=4, num_heads=4, intermediate_size=768),
    "mid": dict(hidden_size=512, num_layers=8, num_heads=8, intermediate_size=2048),
    "large": dict(hidden_size=768, num_layers=12, num_heads=12, intermediate_size=3072),
}


def _batch(args) -> list:
    """One step's sequences of the build's mixture, drawn from its own seed (for a Pool)."""
    phase, cfg, seed = args
    from critic.rubrics import load_rubrics
    from k2rl.bootstrap import sft
    from k2rl.bootstrap.model import build_tokenizer
    from k2rl.step.critic_demos import critic_demonstration

    tokenizer, rng = build_tokenizer(), np.random.default_rng(seed)
    demo_envs, critic_envs, rubrics = sft.make_demo_envs(cfg), sft.make_critic_envs(cfg), load_rubrics()
    judged = cfg.critic_demo_rate if phase == "warm" else cfg.judge_share
    out = []
    for _ in range(cfg.sft_batch):
        if rng.random() < judged:
            env = critic_envs[int(rng.integers(len(critic_envs)))]
            out.append(critic_demonstration(env, tokenizer, int(rng.integers(2**31)), rng, rubrics))
        else:
            env = demo_envs[int(rng.integers(len(demo_envs)))]
            out.append(sft.demonstration(env, tokenizer, int(rng.integers(2**31)), rng))
    return out


def build(size: str, device: str, lr_scale: float, chunk_tokens: int | None, procs: int,
          steps_scale: float = 1.0, start: Path | None = None, judge_steps: int | None = None,
          **recipe):
    """The default recipe's build at `size` (other recipe fields in `recipe`): warm-start
    then judging phase, on `device`, from sequences drawn in `procs` processes, each forward
    over at most `chunk_tokens` padded tokens. Returns (model, tokenizer, stats)."""
    from transformers import Qwen2ForCausalLM

    from k2rl.bootstrap import sft
    from k2rl.bootstrap.model import build_config, build_tokenizer
    from k2rl.bootstrap.recipe import Recipe

    nll = getattr(sft.bucketed_nll_backward, "func", sft.bucketed_nll_backward)
    sft.bucketed_nll_backward = functools.partial(nll, budget=chunk_tokens)
    d = Recipe()
    cfg = Recipe(**SIZES[size], sft_steps=max(1, round(d.sft_steps * steps_scale)),
                 judge_steps=max(1, round(200 * steps_scale)))  # recipe 11's phase
    if judge_steps is not None:
        cfg = dataclasses.replace(cfg, judge_steps=judge_steps)
    cfg = dataclasses.replace(cfg, **recipe)  # e.g. the instruction scripts' options
    tokenizer = build_tokenizer()
    torch.manual_seed(cfg.seed)
    if start:  # a warm-started build: its judging phase alone
        model = Qwen2ForCausalLM.from_pretrained(start, dtype=torch.float32).to(device)
    else:
        model = Qwen2ForCausalLM(build_config(cfg, tokenizer)).to(device)
    stats = {"params": sum(p.numel() for p in model.parameters()), **SIZES[size],
             "sft_lr": cfg.sft_lr * lr_scale, "judge_lr": cfg.judge_lr * lr_scale}
    with multiprocessing.get_context("fork").Pool(procs) as pool:
        phases = [("warm", cfg.sft_steps, cfg.sft_lr)] * (start is None) + [
            ("judge", cfg.judge_steps, cfg.judge_lr)] * (cfg.judge_steps > 0)
        for phase, steps, lr in phases:
            t = time.time()
            batches = pool.map(_batch, [(phase, cfg, [cfg.seed, phase == "judge", s])
                                        for s in range(steps)])
            drawn = time.time() - t
            seqs = iter([s for b in batches for s in b])
            t = time.time()
            stats[phase] = sft.train_steps(model, tokenizer, lambda: next(seqs), steps,
                                           cfg.sft_batch, lr * lr_scale, phase, progress=False)
            stats[phase].update(draw_seconds=round(drawn, 1), train_seconds=round(time.time() - t, 1))
            print(size, phase, stats[phase], flush=True)
    return model.eval(), tokenizer, stats


def _left_padded(prompts: list[list[int]], pad: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, p in enumerate(prompts):
        ids[i, width - len(p):] = torch.tensor(p)
        mask[i, width - len(p):] = 1
    return ids.to(device), mask.to(device)


def hf_generate(model, tokenizer, batch: int = 256):
    """A k2rl Generate over a Hugging Face model: greedy only (the judge's and the held-out
    evaluation's temperature), left-padded batches, each reply cut at its own max_tokens and
    after its end of sequence (which it keeps, as vLLM's token ids do)."""
    eos = tokenizer.eos_token_id

    @torch.no_grad()
    def generate(prompts, max_tokens, temperatures):
        if any(t > 0 for t in temperatures):
            raise ValueError("hf_generate is greedy only")
        out = [None] * len(prompts)
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            ids, mask = _left_padded([prompts[i] for i in idx], tokenizer.pad_token_id, model.device)
            gen = model.generate(input_ids=ids, attention_mask=mask, do_sample=False,
                                 max_new_tokens=max(max_tokens[i] for i in idx),
                                 eos_token_id=eos, pad_token_id=tokenizer.pad_token_id)
            for row, i in zip(gen[:, ids.shape[1]:].tolist(), idx):
                row = row[:max_tokens[i]]
                if eos in row:
                    row = row[:row.index(eos) + 1]
                out[i] = (row, [0.0] * len(row))
        return out

    return generate


def hf_score(model, tokenizer, batch: int = 128):
    """log p(verdict | prompt) for each prompt and each of the two verdict tokens."""
    from k2rl.step.critic_ids import verdict_ids

    choices = verdict_ids(tokenizer)

    @torch.no_grad()
    def score(prompts):
        out = []
        for s in range(0, len(prompts), batch):
            ids, mask = _left_padded(prompts[s:s + batch], tokenizer.pad_token_id, model.device)
            logits = model(input_ids=ids, attention_mask=mask).logits[:, -1].float()
            out += torch.log_softmax(logits, -1)[:, choices].tolist()
        return out

    return score


def measure(model, tokenizer, pairs, max_len: int = 1024, judgments_to: Path | None = None,
            check_tokens: int = 128) -> dict:
    """The judge on `pairs` and the policy's greedy held-out accuracy, from the HF model;
    every judgment, laid out as `k2rl critic eval --show` does, to `judgments_to` if given."""
    from critic.evaluate import evaluate_critic, format_judgments
    from critic.rubrics import load_rubrics
    from k2rl.config import load_config
    from k2rl.step.heldout import eval_requests
    from k2rl.step.critic_engine import critic_with
    from k2rl.step.rollout import rollout

    generate, score = hf_generate(model, tokenizer), hf_score(model, tokenizer)
    t = time.time()
    judge = critic_with(generate, score, tokenizer, max_len, 0.0, check_tokens)
    result, judgments = evaluate_critic(pairs, load_rubrics(), judge, 0.0)
    judge_s = time.time() - t
    if judgments_to:
        judgments_to.write_text(format_judgments(pairs, judgments, len(pairs)) + "\n")
    cfg = load_config()
    t = time.time()
    groups = rollout(eval_requests(cfg), tokenizer, generate, 0, cfg.rollout.truncation_penalty,
                     max_len)
    by_task, problems = defaultdict(list), defaultdict(set)
    for g in groups:
        for traj in g:
            for task in (traj.task, "all"):
                by_task[task].append(traj.correct)
                problems[task].add((traj.env_id, traj.prompt_id))
    policy = {task: {"accuracy": float(np.mean(v)), "n": len(problems[task])}
              for task, v in by_task.items()}
    by_family = {}
    for task in sorted({p.task for p in pairs}):
        idx = [i for i, p in enumerate(pairs) if p.task == task]
        by_family[task] = idx[: 2]
    shown = format_judgments([pairs[i] for v in by_family.values() for i in v],
                             [judgments[i] for v in by_family.values() for i in v], 100)
    return {"judge": result, "policy": policy, "judge_seconds": round(judge_s, 1),
            "policy_seconds": round(time.time() - t, 1), "shown": shown}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pairs", type=Path, required=True, help="held-out pairs (JSONL)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--size", choices=sorted(SIZES), help="build the default recipe at this size")
    src.add_argument("--model", type=Path, help="measure an existing model folder")
    p.add_argument("--start", type=Path, help="with --size default: a warm-started build (before its "
                   "judging phase) to continue, instead of a warm-start from scratch")
    p.add_argument("--judge-steps", type=int, help="judging-phase steps (default: recipe 11's 200)")
    p.add_argument("--instr-bounds", action="store_true",
                   help="the recipe's instr_bounds: instruction checks with each bound beside its count")
    p.add_argument("--misspell-rate", type=float, default=0.0,
                   help="the recipe's instr_misspell_rate: wrong instruction replies that misspell")
    p.add_argument("--instr-compare", action="store_true",
                   help="the recipe's instr_compare: the quoted word compared letter by letter")
    p.add_argument("--name", help="the result's name (default: from the arguments)")
    p.add_argument("--judgments", type=Path, help="also write every judgment here (--show's layout)")
    p.add_argument("--save", type=Path, help="save the built model here")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--lr-scale", type=float, default=1.0, help="times both phases' peak rates")
    p.add_argument("--chunk-tokens", type=int,
                   help="padded tokens per forward of a build step (default: the device's, "
                        "k2rl.bootstrap.sft.bucketed_nll_backward)")
    p.add_argument("--procs", type=int, default=max(1, (multiprocessing.cpu_count() or 2) - 1))
    p.add_argument("--steps-scale", type=float, default=1.0, help="(smoke tests) times the steps")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    from critic.pairs import read_pairs
    from k2rl.lm.chat import load_tokenizer
    from k2rl.lm.hf import built_recipe
    from k2rl.step.critic_ids import check_tokens
    from transformers import AutoModelForCausalLM

    pairs = read_pairs(args.pairs)
    t = time.time()
    if args.size:
        model, tokenizer, stats = build(args.size, args.device, args.lr_scale, args.chunk_tokens,
                                        args.procs, args.steps_scale, args.start, args.judge_steps,
                                        instr_bounds=args.instr_bounds,
                                        instr_misspell_rate=args.misspell_rate,
                                        instr_compare=args.instr_compare)
        name = args.name or f"{args.size} (lr x{args.lr_scale})" + (
            f" from {args.start.name}, judging phase {args.judge_steps}" if args.start else "")
        options = {"instr_bounds": args.instr_bounds, "instr_misspell_rate": args.misspell_rate,
                   "instr_compare": args.instr_compare}
        built_with = {k: v for k, v in options.items() if v}  # named where set, as recipe_fields() does
        if args.save:
            model.save_pretrained(args.save)
            tokenizer.save_pretrained(args.save)
            # what k2rl reads of a build (k2rl.lm.hf.built_recipe): its judge's script options
            (args.save / "recipe.json").write_text(json.dumps({**built_with, **stats}, indent=1))
    else:
        tokenizer = load_tokenizer(args.model)
        model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
        model = model.to(args.device).eval()
        stats = {"params": sum(p.numel() for p in model.parameters())}
        name = args.name or args.model.name
        built_with = built_recipe(args.model)
    built = time.time() - t
    row = {**stats, "build_seconds": round(built, 1),
           **measure(model, tokenizer, pairs, judgments_to=args.judgments,
                     check_tokens=check_tokens(built_with)),
           "device": torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu",
           "pairs": str(args.pairs), "when": datetime.datetime.now().isoformat(timespec="seconds")}
    j = row["judge"]
    print(json.dumps({"model": name, "judge_all": round(j["accuracy"], 3),
                      **{t: round(m["accuracy"], 3) for t, m in j["by_task"].items()},
                      "policy": {t: round(v["accuracy"], 3) for t, v in row["policy"].items()},
                      "build_s": row["build_seconds"], "judge_s": row["judge_seconds"]}), flush=True)
    old = json.loads(args.out.read_text()) if args.out.exists() else {}
    old[name] = row
    args.out.write_text(json.dumps(old, indent=1) + "\n")


if __name__ == "__main__":
    main()
