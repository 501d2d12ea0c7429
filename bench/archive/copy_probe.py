"""Probe: does a copying curriculum teach a built default model to copy, and then to write checks?

Continues a built default model (default: recipe 11's cache folder) for --steps warm-start steps
in which --copy of the sequences are copying drills (this probe's own three forms: "Repeat:",
"List the words:", "Say it back."; k2rl.bootstrap.copying has the recipe's four), --judge are
scripted judgments and the rest expert demonstrations, then measures the share of 100 drills
copied exactly (teacher-forced greedy) and, per family, the check lines written
(bench/archive/judge_skill.py, eval split, --n judgments). Results: --out (JSON); the model beside it.

    PYTHONPATH=. .venv/bin/python bench/archive/copy_probe.py --steps 150 --copy 0.25 --judge 0.25
"""
import sys, json, math, time, argparse, tempfile
import numpy as np, torch
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import envs  # noqa
from critic.rubrics import load_rubrics
from k2rl.bootstrap.recipe import Recipe
from k2rl.bootstrap.model import INSTRUCTION_SCRIPTS
from k2rl.bootstrap.copying import copies
from k2rl.lm.chat import load_tokenizer, conversation_ids
from k2rl.bootstrap.sft import make_demo_envs, make_critic_envs, demonstration, bucketed_nll_backward
from k2rl.step.critic_demos import critic_demonstration
from transformers import AutoModelForCausalLM
sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_skill import skill

LET = "abcdefghijklmnopqrstuvwxyz"

def rand_words(rng):
    n = int(rng.integers(2, 7))
    ws = ["".join(rng.choice(list(LET), int(rng.integers(2, 7)))) for _ in range(n)]
    ws = [w.capitalize() if rng.random() < 0.3 else w for w in ws]
    return ws

def copy_example(tok, rng):
    ws = rand_words(rng)
    text = " ".join(ws)
    form = rng.integers(3)
    if form == 0:
        return conversation_ids(tok, [{"role": "user", "content": f"Repeat: {text}"}, {"role": "assistant", "content": text}])
    if form == 1:  # numbered list, as the instruction check lists words
        return conversation_ids(tok, [{"role": "user", "content": f"List the words: {text}"},
                                      {"role": "assistant", "content": " ".join(f"{i+1} {w}" for i, w in enumerate(ws))}])
    return conversation_ids(tok, [{"role": "user", "content": f"Say it back. {text}"}, {"role": "assistant", "content": text}])

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="/root/.cache/k2rl/models/qwen2-char-3b0a00d8ebfe")
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--copy", type=float, default=0.25)
    p.add_argument("--judge", type=float, default=0.25)
    p.add_argument("--n", type=int, default=30)
    p.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "copy_probe.json"))
    a = p.parse_args()
    cfg = Recipe(**INSTRUCTION_SCRIPTS)  # recipe 11's scripts (the options off)
    tok = load_tokenizer(a.model)
    model = AutoModelForCausalLM.from_pretrained(a.model, dtype=torch.float32)
    rub = load_rubrics()
    jenvs = make_critic_envs(cfg); denvs = make_demo_envs(cfg)
    def measure(tag):
        model.eval()
        r = {"copy": copies(model, tok, drill=copy_example)}
        for env in jenvs:
            r[env.task] = skill(model, tok, env, rub, "eval", a.n, 1)["line_written"]
        print(tag, json.dumps(r), flush=True)
        return r
    res = {"args": vars(a), "before": measure("before")}
    rng = np.random.default_rng(123)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.01, betas=(0.9, 0.98))
    model.train(); t = time.time()
    for s in range(a.steps):
        seqs = []
        for _ in range(cfg.sft_batch):
            u = rng.random()
            if u < a.copy:
                seqs.append(copy_example(tok, rng))
            elif u < a.copy + a.judge:
                seqs.append(critic_demonstration(jenvs[int(rng.integers(len(jenvs)))], tok, int(rng.integers(2**31)), rng, rub))
            else:
                seqs.append(demonstration(denvs[int(rng.integers(len(denvs)))], tok, int(rng.integers(2**31)), rng))
        opt.zero_grad(set_to_none=True)
        loss = bucketed_nll_backward(model, seqs, tok.pad_token_id)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if s % 25 == 0 or s == a.steps - 1:
            print(f"step {s} loss {loss:.3f} {time.time()-t:.0f}s", flush=True)
    res["after"] = measure("after"); res["seconds"] = time.time() - t
    json.dump(res, open(a.out, "w"), indent=1)
    d = a.out.replace(".json", "_model"); model.save_pretrained(d); tok.save_pretrained(d)

if __name__ == "__main__":
    main()
