"""How a run's held-out answers read under `math_equiv` (the final answer: boxed, tagged,
"the answer is", else the last line's value) against a plain last-number reading of the same
replies: the two agree where the verifier reads what real models write.

    python bench/answer_reading.py RUN_DIR [--task word_sums] [--out FILE.json]

It reads every stored held-out evaluation of the run (`k2rl rollouts --heldout --json`) and
writes, per evaluation step, n distinct problems, each reading's accuracy and the replies on
which they disagree.
"""
import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rewards import math_equiv  # noqa: E402

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def last_number(reply: str) -> str | None:
    """The last number in the reply, thousands separators dropped."""
    found = NUMBER.findall(reply.replace(",", ""))
    return found[-1] if found else None


def readings(rows: list[dict]) -> dict:
    replies = [r["messages"][-1]["content"] for r in rows]
    answers = [r["answer"] for r in rows]
    questions = [r["messages"][0]["content"] for r in rows]
    verifier = math_equiv(replies, answers, questions)
    plain = [float(last_number(x) is not None and float(last_number(x)) == float(a))
             for x, a in zip(replies, answers)]
    differ = [{"reply": x, "answer": a, "math_equiv": v, "last_number": p}
              for x, a, v, p in zip(replies, answers, verifier, plain) if v != p]
    n = len({r["prompt_id"] for r in rows})
    return {"n": n, "math_equiv": sum(verifier) / len(rows), "last_number": sum(plain) / len(rows),
            "differ": differ}


def heldout(run_dir: str, step: int, task: str) -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "k2rl", "rollouts", run_dir, "--heldout",
                          "--step", str(step), "--task", task, "--limit", "0", "--json"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    rows = json.loads(out)
    for r in rows:  # the answer key of each problem: its env's, as the run scored it
        r["answer"] = r.get("answer") or answer_of(r)
    return rows


def answer_of(row: dict) -> str:
    """The problem's answer from its key ("54+55", "67-53")."""
    a, op, b = re.match(r"(\d+)([+-])(\d+)", row["prompt_id"]).groups()
    return str(int(a) + int(b) if op == "+" else int(a) - int(b))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_dir")
    p.add_argument("--task", default="word_sums")
    p.add_argument("--out", default=str(ROOT / "bench/results/answer_reading.json"))
    args = p.parse_args()
    metrics = [json.loads(x) for x in Path(args.run_dir, "metrics.jsonl").read_text().splitlines()]
    steps = [m["step"] for m in metrics if f"heldout/{args.task}/accuracy" in m]
    result = {"run": args.run_dir, "task": args.task,
              "steps": {s: readings(heldout(args.run_dir, s, args.task)) for s in steps}}
    Path(args.out).write_text(json.dumps(result, indent=1))
    for s, r in result["steps"].items():
        print(f"step {s}: n={r['n']} math_equiv {r['math_equiv']:.3f} last number "
              f"{r['last_number']:.3f} ({len(r['differ'])} replies read differently)")


if __name__ == "__main__":
    main()
