"""Probe: can the default model learn to find a quoted word among a reply's words?

The instruction judge's last failure (bench/archive/notebook.md, "Misspelled wrong replies, bounds beside
counts"): it lists the reply's words ("1 TEA+ 2 WATER+") and then writes the quoted-word
finding ("no 'tea' yes") without looking the quoted word up among them. A draft that marked
the listed word equal to the quoted one ("1 navy*+") learnt to mark the *first* word whenever
the prompt said "include": the expert's answer puts the included word first
(envs.instructions.compose). This probe asks, teacher-forced on scripted judgments of
eval-split prompts, which of these layouts the model learns, and whether the reply's case (the
quoted word is lower case, a listed word may be "TEA" or "Tea") is what stops it:

    finding:  1 TEA+ 2 WATER+; drinks yes, no 'tea' no: no          (the env's own layout)
    mark:     1 TEA*+ 2 WATER+; drinks yes, no 'tea' no: no         (the draft)
    shuffled: the mark, and the expert puts the included word anywhere, not first
    folded:   1 tea+ 2 water+; ... the words listed case-folded, the finding as the env's
    pairs:    1 water+ wt! 2 tea+ tteeaa=; drinks yes, no 'tea' no: no   (folded; each listed
              word compared with the quoted one a letter pair at a time, as chat's check
              compares the reply with the judge's answer, "!" at the first pair that differs)
    running:  1 water+ wt!. 2 tea+ tteeaa=^; ...   (pairs, then after each word a running
              flag: "^" once a listed word equals the quoted one, "." until then)
    cased:    running with the words listed as written: 1 WATER+ wt!. 2 TEA+ tteeaa=^
    first:    cased, and the include or avoid finding first, next to the last flag:
              1 WATER+ wt!. 2 TEA+ tteeaa=^; no 'tea' no, drinks yes: no
    induct:   1 tea+ 2 water+; drinks yes, no tea+ no: no   (folded; the quoted word written
              bare, then "+" if it was listed (what followed it in the list), "-" if not)

It continues a built model (default: recipe 11's warm-start, the judging phase's start) on
batches of 32 scripted instruction judgments whose prompts all quote a word
(`word_constraint`), at lr 1e-3, and every 50 steps counts on 80 eval-split judgments (160
checks): each finding's yes/no and each listed word's mark ("*" or not) as the model ranks
them, by whether the word is there, its position and the reply's case.

    PYTHONPATH=. .venv/bin/python bench/archive/quoted_word_probe.py --layout shuffled [--steps 150]

Results: bench/archive/results/quoted_word_probe.json (one entry per layout and model).
"""
from __future__ import annotations

import argparse
import collections
import datetime
import json
import re
import time
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModelForCausalLM

import envs.instructions as instructions
from bench.archive.judge_skill import runs
from critic.rubrics import load_rubrics
from envs.base import check_line
from k2rl.bootstrap.sft import bucketed_nll_backward, make_critic_envs
from k2rl.config import ModelConfig
from k2rl.lm.chat import load_tokenizer
from k2rl.step.critic_demos import critic_demonstration
from rewards.instructions import edges_stripped, satisfied, visible_form, words

OUT = Path(__file__).resolve().parent / "results" / "quoted_word_probe.json"
WARM_START = Path("~/.cache/k2rl/models/qwen2-char-3b0a00d8ebfe").expanduser()  # recipe 11
LAYOUTS = ("finding", "mark", "shuffled", "folded", "induct", "pairs", "running", "cased", "first")
ENTRY = re.compile(r"(\d+) (\S+?)(\*?)([+?])(?= \d| [a-z_^]| *;)")
FINDING = re.compile(r"(has|no) '?([a-z]+)('|[+-]) (yes|no)")


def listed(response: str, vocabulary, quoted: set[str], layout: str, most: int = 8) -> str:
    """The reply's words as the layout lists them (envs.instructions.word_list, plus the mark
    or the case-folding)."""
    topic = {visible_form(w) for w in vocabulary}
    out, found = [], False
    for i, word in enumerate(words(response)[:most], 1):
        seen = edges_stripped(visible_form(word))
        shown = seen if layout in ("folded", "induct", "pairs", "running") else edges_stripped(word)
        mark = "*" if layout in ("mark", "shuffled") and seen in quoted else ""
        compared = f" {compare(seen, min(quoted))}" if layout in ("pairs", "running", "cased", "first") and quoted else ""
        if layout in ("running", "cased", "first") and quoted:
            found = found or compared.endswith("=")
            compared += "^" if found else "."
        out.append(f"{i} {shown}{mark}{'+' if seen in topic else '?'}{compared}")
    return " ".join(out) or "0"


def compare(word: str, quoted: str) -> str:
    """The two words a letter pair at a time ("_" past an end) up to the first pair that
    differs, then "!", or "=" if none does: compare("teal", "tea") == "tteeaal_!"."""
    out = []
    for i in range(max(len(word), len(quoted))):
        a, b = (word[i] if i < len(word) else "_"), (quoted[i] if i < len(quoted) else "_")
        out.append(a + b)
        if a != b:
            return "".join(out) + "!"
    return "".join(out) + "="


def finding(response: str, constraint: dict, layout: str) -> str:
    """The note on one constraint before its yes/no: the env's, or for "induct" the quoted
    word bare and "+" if the reply has it, "-" if not ("no tea+")."""
    kind = constraint["kind"]
    if layout == "induct" and kind in ("include", "exclude"):
        there = visible_form(constraint["word"]) in {edges_stripped(visible_form(w))
                                                     for w in words(response)}
        return f"{'has' if kind == 'include' else 'no'} {constraint['word']}{'+' if there else '-'}"
    return instructions._observed(response, constraint)


def use_layout(layout: str) -> None:
    """Patch the instruction env's check (and, for "shuffled", the expert's word order)."""
    def judge_check(self, response: str) -> str:
        spec = self._require_active().answer
        quoted = {visible_form(c["word"]) for c in spec if c["kind"] in ("include", "exclude")}
        met = satisfied(response, spec)
        if layout == "first":  # the quoted word's finding first
            order = sorted(range(len(spec)), key=lambda i: spec[i]["kind"] not in ("include", "exclude"))
            spec, met = [spec[i] for i in order], [met[i] for i in order]
        return check_line(listed(response, self._require_active().vocabulary, quoted, layout)
                          + "; " + ", ".join(f"{finding(response, c, layout)} "
                                             f"{'yes' if ok else 'no'}"
                                             for c, ok in zip(spec, met)), all(met))

    instructions.InstructionsEnv.judge_check = judge_check
    if layout == "shuffled":
        compose = instructions.compose

        def shuffled(spec, vocabulary, rng=None):
            text = compose(spec, vocabulary, rng)
            if text is None or rng is None:
                return text
            for _ in range(instructions.MAX_TRIES):  # the same words, in another order
                moved = instructions.render(
                    [str(w) for w in rng.permutation([edges_stripped(w).lower()
                                                      for w in words(text)])], spec)
                if instructions.follow_score(moved, spec) == 1.0:
                    return moved
            return text

        instructions.compose = shuffled


def measure(model, tok, envs_, rubrics, n: int = 80) -> dict:
    """Teacher-forced counts on `n` eval-split judgments (the same ones at every call)."""
    model.eval()
    ids_of = {c: tok.convert_tokens_to_ids(c) for c in "*+?yn-=!^."}
    counts = collections.Counter()
    rng = np.random.default_rng(1)
    for i in range(n):
        ids, mask = critic_demonstration(envs_[i % len(envs_)], tok, int(rng.integers(2**31)),
                                         rng, rubrics, split="eval")
        with torch.no_grad():
            lp = model(torch.tensor([ids])).logits[0].log_softmax(-1)
        for a, b in runs(mask)[:2]:  # the two checks (then the verdict)
            text = tok.decode(ids[a:b - 1])  # without the end-of-turn token
            assert len(text) == b - 1 - a, "one token a character (the default's tokenizer)"
            head = text.split(";")[0]
            entries = list(ENTRY.finditer(head))
            case = "lower" if all(e.group(2) == e.group(2).lower() for e in entries) else "cased"
            for e in entries:
                at = a + e.start(3) if e.group(3) else a + e.start(4)
                said = lp[at - 1, ids_of["*"]] > max(lp[at - 1, ids_of["+"]], lp[at - 1, ids_of["?"]])
                where = "first" if e.group(1) == "1" else "later"
                counts[f"mark {'quoted' if e.group(3) else 'other'} {where} {case} "
                       f"{'right' if bool(said) == bool(e.group(3)) else 'wrong'}"] += 1
            for m in re.finditer(r"[+?] ((?:[a-z_]{2})+)([=!])([.^]?)", head):
                kind = "same" if m.group(2) == "=" else "differ"
                for at in range(a + m.start(1), a + m.end(2)):  # every letter and the mark
                    right = int(lp[at - 1].argmax()) == ids[at]
                    counts[f"pair {kind} chars {'right' if right else 'wrong'}"] += 1
                if m.group(3):
                    at = a + m.start(3)
                    said_found = lp[at - 1, ids_of["^"]] > lp[at - 1, ids_of["."]]
                    counts[f"flag {'^' if m.group(3) == '^' else '.'} "
                           f"{'right' if bool(said_found) == (m.group(3) == '^') else 'wrong'}"] += 1
            for f in re.finditer(r"(lowercase|uppercase) (yes|no)", text):
                at = a + f.start(2)
                said_yes = lp[at - 1, ids_of["y"]] > lp[at - 1, ids_of["n"]]
                counts[f"case {f.group(2)} {'right' if bool(said_yes) == (f.group(2) == 'yes') else 'wrong'}"] += 1
            for f in FINDING.finditer(text):
                kind, sign, answer = f.group(1), f.group(3), f.group(4)
                present = (kind == "has") == (answer == "yes")
                where = f"{'include' if kind == 'has' else 'avoid'} {'there' if present else 'absent'} {case}"
                at = a + f.start(4)
                said_yes = lp[at - 1, ids_of["y"]] > lp[at - 1, ids_of["n"]]
                counts[f"{where} {'right' if bool(said_yes) == (answer == 'yes') else 'wrong'}"] += 1
                if sign in "+-":  # "induct": the sign decides, the yes/no follows from it
                    at = a + f.start(3)
                    said_plus = lp[at - 1, ids_of["+"]] > lp[at - 1, ids_of["-"]]
                    counts[f"sign {where} {'right' if bool(said_plus) == (sign == '+') else 'wrong'}"] += 1
    model.train()
    return dict(sorted(counts.items()))


def summary(counts: dict) -> dict:
    """Right / all for each slice, the last word (right/wrong) folded."""
    out = collections.defaultdict(lambda: [0, 0])
    for key, c in counts.items():
        slice_, verdict = key.rsplit(" ", 1)
        out[slice_][1] += c
        out[slice_][0] += c if verdict == "right" else 0
    return {k: f"{r}/{n}" for k, (r, n) in sorted(out.items())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layout", choices=LAYOUTS, required=True)
    ap.add_argument("--model", type=Path, default=WARM_START)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    use_layout(args.layout)
    torch.manual_seed(0)
    tok = load_tokenizer(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    rubrics = load_rubrics()
    envs_ = [e for e in make_critic_envs(ModelConfig().default) if e.task == "instructions"]
    for env in envs_:
        env.word_constraint = True  # every prompt quotes a word
    history = {0: measure(model, tok, envs_, rubrics)}
    print(0, summary(history[0]), flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01, betas=(0.9, 0.98))
    rng, start = np.random.default_rng(7), time.time()
    for step in range(1, args.steps + 1):
        seqs = [critic_demonstration(envs_[int(rng.integers(len(envs_)))], tok,
                                     int(rng.integers(2**31)), rng, rubrics) for _ in range(32)]
        opt.zero_grad()
        loss = bucketed_nll_backward(model, seqs, tok.pad_token_id)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 50 == 0 or step == args.steps:
            history[step] = measure(model, tok, envs_, rubrics)
            print(step, round(loss, 4), f"{time.time() - start:.0f}s", summary(history[step]),
                  flush=True)
    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    results[f"{args.layout} from {args.model.name}"] = {
        "date": datetime.date.today().isoformat(), "steps": args.steps, "lr": args.lr,
        "batch": 32, "seconds": round(time.time() - start),
        "summary": {step: summary(c) for step, c in history.items()}, "counts": history}
    args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
