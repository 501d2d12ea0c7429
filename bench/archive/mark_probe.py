"""Probe: can the default model learn a check's mismatch mark from more scripted judgments alone?

A check compares two results a character at a time ("58 vs 57, 55=87!: no"): after each pair
of characters the judge writes "=" if they are equal and "!" if not. This continues a built
default model (default: recipe 11's cache folder) on batches of arithmetic scripted judgments
only (training-split prompts, k2rl.step.critic_demos), 32 a step at `LR`, and every 50 steps
counts, teacher-forced on 60 judgments of eval-split prompts, the marks by what the script has
and what the model puts first ("=!": the script has "=", the model "!").

    PYTHONPATH=. .venv/bin/python bench/archive/mark_probe.py MODEL_DIR STEPS LR > bench/archive/results/mark_probe.txt

(`bench/archive/results/mark_probe.txt`: recipe 11's build, 200 steps at 1e-3, 2026-11-26.)
"""
import collections
import sys
import time

import numpy as np
import torch

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
import envs
from critic.rubrics import load_rubrics
from k2rl.config import ModelConfig
from k2rl.lm.chat import load_tokenizer
from k2rl.bootstrap.sft import make_critic_envs, bucketed_nll_backward
from k2rl.step.critic_demos import critic_demonstration
from bench.archive.judge_skill import runs
from transformers import AutoModelForCausalLM
path = sys.argv[1]; steps = int(sys.argv[2]); lr = float(sys.argv[3])
tok = load_tokenizer(path)
model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
rub = load_rubrics()
eq, ne = tok.convert_tokens_to_ids("="), tok.convert_tokens_to_ids("!")
jenvs = [e for e in make_critic_envs(ModelConfig().default) if e.task in ("arithmetic",)]
def measure(tag):
    model.eval(); out = {}
    for env in jenvs:
        rng = np.random.default_rng(1); c = collections.Counter()
        for _ in range(60):
            ids, mask = critic_demonstration(env, tok, int(rng.integers(2**31)), rng, rub, split="eval")
            with torch.no_grad():
                lp = model(torch.tensor([ids])).logits[0].log_softmax(-1)
            for a, b in runs(mask)[:-1]:
                for i in range(a, b):
                    if ids[i] in (eq, ne) and ids[i-1] != eq and tok.decode(ids[i-2:i]).strip() and "vs" not in tok.decode(ids[i-3:i]):
                        c[("=" if ids[i] == eq else "!") + ("=" if lp[i-1, eq] > lp[i-1, ne] else "!")] += 1
        out[env.task] = dict(c)
    print(tag, out, flush=True); model.train()
measure("before")
opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, betas=(0.9, 0.98))
rng = np.random.default_rng(7); t = time.time()
for s in range(steps):
    seqs = [critic_demonstration(jenvs[int(rng.integers(len(jenvs)))], tok, int(rng.integers(2**31)), rng, rub) for _ in range(32)]
    opt.zero_grad(); loss = bucketed_nll_backward(model, seqs, tok.pad_token_id)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0); opt.step()
    if (s + 1) % 50 == 0:
        print(s + 1, round(loss, 4), round(time.time() - t), flush=True); measure(f"step {s+1}")
