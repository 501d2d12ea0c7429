"""Probe: would another layout of the instruction check let the default judge read the reply?

The instruction check lists the reply's words numbered ("1 navy+ 2 green+"), and the 3.4 M-parameter
default writes the topic's commonest words instead (bench/archive/notebook.md, "Why the checks fail"): a list
whose words are split by numbers gives a copying attention no context to match. This probe tries
the layout a small copier should find easiest, the reply echoed verbatim first (each next character
follows the one just written, as in the reply right above), then a mark per word, then the findings,
with no quoted word to copy from the question; and one with no copy of the reply at all:

    current: 1 navy+ 2 green+; colors yes, 2 words yes, has 'navy' yes: yes
    echo:    navy green | 1+ 2+; colors yes, 2 words yes, include yes: yes
    decide:  colors yes, min 2 words yes, include yes: yes   (findings only, nothing listed)

`--train` continues the warm-start build (recipe 11, before its judging phase) for the judging
phase's 200 steps (k2rl.bootstrap.sft.judging_phase, the default's share and rate) with the
--check layout in the scripts, and saves the model. `--free MODEL` has a model write its check lines greedily
(free generation, the script's own answer as its working) on --n eval-split instruction pairs and
counts: the finding right (": yes" exactly when the reply meets every constraint), the line exact,
and pairs whose expert reply got "yes" and wrong reply "no".

    PYTHONPATH=. .venv/bin/python bench/archive/instr_check_probe.py --train --check echo --out DIR
    PYTHONPATH=. .venv/bin/python bench/archive/instr_check_probe.py --free DIR --check echo [--n 60]

Results: bench/archive/results/instr_check_probe.json (one entry per --free model).
"""
from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path

import numpy as np
import torch

import envs  # noqa: F401  (registers the environments)
import envs.instructions as instructions
from envs.base import check_line
from rewards.instructions import edges_stripped, satisfied, visible_form, words

OUT = Path(__file__).resolve().parent / "results" / "instr_check_probe.json"
WARM_START = Path("~/.cache/k2rl/models/qwen2-char-3b0a00d8ebfe").expanduser()  # recipe 11


def finding(response: str, constraint: dict) -> str:
    """What the echo check notes for one constraint: nothing copied from the question."""
    kind = constraint["kind"]
    if kind in ("include", "exclude"):
        return "include" if kind == "include" else "avoid"
    if kind == "topic":
        return constraint["name"]
    if kind in ("max_words", "min_words"):
        return f"{len(words(response))} words"
    return instructions._observed(response, constraint)


def marks(response: str, vocabulary: tuple[str, ...], most: int = 8) -> str:
    """One mark a word, numbered: "1+ 2?" (on topic or not), without the words."""
    topic = {visible_form(w) for w in vocabulary}
    return " ".join(f"{i}{'+' if edges_stripped(visible_form(w)) in topic else '?'}"
                    for i, w in enumerate(words(response)[:most], 1)) or "0"


def echo_check(self, response: str) -> str:
    problem = self._require_active()
    spec, met = problem.answer, satisfied(response, problem.answer)
    return check_line(f"{response} | {marks(response, problem.vocabulary)}; " + ", ".join(
        f"{finding(response, c)} {'yes' if ok else 'no'}" for c, ok in zip(spec, met)), all(met))


def decide_check(self, response: str) -> str:
    """Findings only, nothing listed: each constraint as the prompt states it (the quoted word
    left out) and whether the reply meets it."""
    problem = self._require_active()
    spec, met = problem.answer, satisfied(response, problem.answer)
    named = [finding(response, c) if c["kind"] in ("include", "exclude", "topic")
             else instructions.describe(c) for c in spec]
    return check_line(", ".join(f"{name} {'yes' if ok else 'no'}"
                                for name, ok in zip(named, met)), all(met))


CHECKS = {"echo": echo_check, "decide": decide_check}


def train(out: Path, steps: int, check: str) -> dict:
    from transformers import AutoModelForCausalLM

    from k2rl.bootstrap.model import INSTRUCTION_SCRIPTS
    from k2rl.bootstrap.sft import judging_phase
    from k2rl.bootstrap.recipe import Recipe
    from k2rl.lm.chat import load_tokenizer

    instructions.InstructionsEnv.judge_check = CHECKS[check]
    tokenizer = load_tokenizer(WARM_START)
    model = AutoModelForCausalLM.from_pretrained(WARM_START, dtype=torch.float32)
    result = judging_phase(model, tokenizer, Recipe(judge_steps=steps, **INSTRUCTION_SCRIPTS))
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return result


def free_checks(model_dir: Path, n: int, show: int = 6) -> dict:
    from transformers import AutoModelForCausalLM

    from critic.layout import check_messages
    from critic.rubrics import load_rubrics, rubrics_for
    from k2rl.bootstrap.sft import make_critic_envs
    from k2rl.bootstrap.recipe import Recipe
    from k2rl.bootstrap.model import INSTRUCTION_SCRIPTS
    from k2rl.lm.chat import load_tokenizer
    from k2rl.step.critic_demos import expert_transcript
    from k2rl.step.critic_ids import open_ids

    tokenizer = load_tokenizer(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    env = next(e for e in make_critic_envs(Recipe(**INSTRUCTION_SCRIPTS)) if e.task == "instructions")
    rubrics = rubrics_for("instructions", load_rubrics())
    rng = np.random.default_rng(7)
    right = exact = pairs = echoed = 0
    examples = []
    for s in range(n):
        question, _ = env.reset(seed=10_000 + s, options={"split": "eval"})
        good = expert_transcript(env, rng)
        env.reset(seed=10_000 + s, options={"split": "eval"})
        bad, own = env.rejected_response(rng), env.judge_working()
        said = []
        for reply in (good, bad):
            ids = open_ids(tokenizer, check_messages(question, rubrics, own, reply))
            with torch.no_grad():
                out = model.generate(torch.tensor([ids]), max_new_tokens=130, do_sample=False)
            text = tokenizer.decode(out[0][len(ids):], skip_special_tokens=True).strip()
            script = env.judge_check(reply)
            said.append(text.rsplit(":", 1)[-1].strip())
            right += said[-1] == script.rsplit(":", 1)[-1].strip()  # the script's own finding
            exact += text == script
            echoed += text.split(" | ")[0] == reply  # the echo layout's first part
            if len(examples) < show:
                examples.append({"question": question, "reply": reply, "wrote": text,
                                 "script": script})
        pairs += said == ["yes", "no"]
    return {"pairs": n, "lines": 2 * n, "finding_right": right / (2 * n),
            "line_exact": exact / (2 * n), "reply_echoed": echoed / (2 * n),
            "pair_yes_no": pairs / n, "examples": examples}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", action="store_true", help="build a model taught the --check layout into --out")
    p.add_argument("--out", type=Path, default=Path("instr_check_model"))
    p.add_argument("--steps", type=int, default=200, help="judging-phase steps (the default's)")
    p.add_argument("--free", type=Path, help="a model folder whose check lines to measure")
    p.add_argument("--check", choices=["numbered", *CHECKS], default="numbered",
                   help="the check layout the model was (--train: is to be) taught")
    p.add_argument("--n", type=int, default=60, help="eval-split pairs")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    if args.train:
        print(train(args.out, args.steps, args.check), flush=True)
    if args.free:
        if args.check in CHECKS:
            instructions.InstructionsEnv.judge_check = CHECKS[args.check]
        row = free_checks(args.free, args.n)
        row.update(check=args.check, when=datetime.datetime.now().isoformat(timespec="seconds"))
        print(json.dumps({k: v for k, v in row.items() if k != "examples"}), flush=True)
        old = json.loads(OUT.read_text()) if OUT.exists() else {}
        old[f"{args.free.name} ({args.check})"] = row
        OUT.write_text(json.dumps(old, indent=1) + "\n")


if __name__ == "__main__":
    main()
