"""Which constraint did the instruction judge miss? Read from its printed judgments.

Reads the judgments `k2rl critic eval --show N --log F` or `bench/archive/judge_capacity.py --judgments F`
write, and the held-out pairs they judged. For each instruction pair it finds the prompt's
constraint spec (the eval split of k2rl/Instructions-v1, redrawn until every prompt is found) and
asks the verifier (`rewards.instructions.satisfied`) which constraints the rejected reply
breaks. It then counts:

- for each broken constraint, whether the judge's finding for it in the rejected reply's
  check says "no" (caught) or not (missed);
- the pairs by the set of constraints the rejected reply breaks, judged right or wrong.

    .venv/bin/python bench/archive/instr_findings.py JUDGMENTS.txt bench/results/heldout_pairs_judge_corr.jsonl

(bench/archive/notebook.md, "Finding the quoted word", has its figures.)
"""
from __future__ import annotations

import collections
import json
import re
import sys

import gymnasium

import envs  # noqa: F401  (registers the environments)
from envs.instructions import describe
from rewards.instructions import satisfied

# A finding's pattern for each kind of constraint (the count alone or beside its bound).
FINDING = {"include": r"has '[^']*' (yes|no)", "exclude": r"no '[^']*' (yes|no)",
           "min_words": r"\d+ words(?:, min \d+)? (yes|no)",
           "max_words": r"\d+ words(?:, max \d+)? (yes|no)",
           "sentences": r"\d+ sentences(?:, want \d+)? (yes|no)",
           "max_chars": r"\d+ chars(?:, max \d+)? (yes|no)"}


def specs(prompts: set[str], most_seeds: int = 200_000) -> dict[str, list[dict]]:
    """prompt -> constraint spec, for every prompt of `prompts` (eval split)."""
    env = gymnasium.make("k2rl/Instructions-v1").unwrapped
    out: dict[str, list[dict]] = {}
    for seed in range(most_seeds):
        env.reset(seed=seed, options={"split": "eval"})
        out[env.problem.prompt] = env.problem.answer
        if prompts <= set(out):
            return out
    raise SystemExit(f"{len(prompts - set(out))} prompts are not eval-split instruction prompts")


def finding_pattern(constraint: dict) -> str:
    kind = constraint["kind"]
    if kind == "topic":
        return re.escape(constraint["name"]) + r" (yes|no)"
    return FINDING.get(kind, re.escape(describe(constraint)) + r" (yes|no)")


def main(judgments: str, pairs_file: str) -> None:
    pairs = [json.loads(line) for line in open(pairs_file)]
    spec_of = specs({p["prompt"] for p in pairs if p["task"] == "instructions"})
    caught, by_broken, n = collections.Counter(), collections.Counter(), 0
    for block in re.split(r"\n(?=\[\d+\] task=)", open(judgments).read()):
        head = re.match(r"\[\d+\] task=instructions\s+P\(chosen better\)=[\d.]+ \((right|WRONG)", block)
        if not head:
            continue
        n += 1
        spec = spec_of[re.search(r"question: (.*)", block).group(1)]
        rejected = re.search(r"rejected: (.*)", block).group(1).replace("\\n", "\n")
        check = re.findall(r"check: +(.*)", block)[1]
        findings = check.split("; ", 1)[1] if "; " in check else ""
        broken = [c for c, ok in zip(spec, satisfied(rejected, spec)) if not ok]
        for c in broken:
            found = re.search(finding_pattern(c), findings)
            caught[c["kind"], found is not None and found.group(1) == "no"] += 1
        by_broken[tuple(sorted({c["kind"] for c in broken})), head.group(1)] += 1
    print(f"instruction pairs: {n}")
    print("a broken constraint's finding in the rejected reply's check says no:")
    for kind in sorted({k for k, _ in caught}):
        print(f"  {kind:10s} {caught[kind, True]:3d} / {caught[kind, True] + caught[kind, False]}")
    print("pairs by the constraints the rejected reply breaks: judged right, wrong")
    for kinds in sorted({k for k, _ in by_broken}):
        print(f"  {', '.join(kinds) or '(none)':32s} {by_broken[kinds, 'right']:3d} "
              f"{by_broken[kinds, 'WRONG']:3d}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
