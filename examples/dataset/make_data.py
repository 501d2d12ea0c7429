"""Write the example math set: sums of two numbers, train.jsonl and a held-out eval.jsonl.

    python examples/dataset/make_data.py

A sum and its commuted form are one problem, so each unordered pair of operands goes to one
file only: held out means held out.
"""
import json
import random
from pathlib import Path

HERE = Path(__file__).parent
TEMPLATES = ("What is {a} plus {b}?", "Add {a} and {b}.", "{a}+{b}=")


def main() -> None:
    rng = random.Random(0)
    pairs = sorted({tuple(sorted(rng.sample(range(2, 60), 2))) for _ in range(400)})
    rng.shuffle(pairs)
    for name, chunk in (("eval", pairs[:40]), ("train", pairs[40:])):
        rows = []
        for a, b in chunk:
            if rng.random() < 0.5:
                a, b = b, a
            prompt = rng.choice(TEMPLATES).format(a=a, b=b)
            rows.append({"question": prompt, "answer": str(a + b)})
        (HERE / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        print(name, len(rows))


if __name__ == "__main__":
    main()
