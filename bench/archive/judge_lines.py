"""What the judge's own check lines get right, read from `k2rl critic eval --show N` output.

    .venv/bin/k2rl critic eval --model MODEL --run RUN --show 1000 > show.txt
    python bench/archive/judge_lines.py show.txt [more.txt ...] [--out bench/archive/results/judge_lines.json]

For each file (one model on one run's fixed held-out pairs), per task:
- marks (arithmetic, chat): each position a result or fact check compares ("58=", "57!") read
  as two characters and a mark; how often "=" is written where the two agree and "!" where
  they differ (the finding of the line follows the marks);
- copying (instructions): how often the word the instruction quotes ("include 'navy'") is the
  word the check names ("has 'navy'"), the reply's words are listed exactly, its first word is
  right, and as many words are listed as the reply has (up to 8);
- copying (arithmetic): how often the line's "X vs Y" has X the reply's result and Y the
  judge's own working's result.
Nothing here is typed in: every figure is counted from the printed judgments.
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

OUT = Path(__file__).resolve().parent / "results" / "judge_lines.json"


def judgments(text: str) -> list[dict]:
    """The printed judgments: task, question, own answer, and (answer, check) for both."""
    out = []
    for block in text.split("\n\n"):
        head = re.match(r"\[\d+\] task=(\S+)", block)
        if not head:
            continue

        def field(name: str) -> str:
            m = re.search(rf"^  {name}:\s*(.*?)(?=\n  \S|\n    check|\Z)", block, re.S | re.M)
            return m.group(1) if m else ""
        checks = re.findall(r"^    check:\s*(.*)$", block, re.M)
        out.append({"task": head.group(1), "question": field("question"),
                    "own": field("critic's own answer") or field("judge's own answer"),
                    "lines": list(zip([field("chosen"), field("rejected")], checks))})
    return out


def marks(check: str, task: str) -> list[tuple[bool, bool]]:
    """(the two characters agree, the mark says they agree) for each mark of a check line."""
    body = check.split(", ", 1)[1] if task == "arithmetic" and ", " in check else check
    body = body.rsplit(":", 1)[0]
    out = []
    for i in range(0, len(body) - 2, 3):
        x, y, mark = body[i:i + 3]
        if mark not in "=!":
            break
        out.append((x == y, mark == "="))
    return out


def words_of(reply: str) -> list[str]:
    return [w.strip('.,"[]-') for w in re.split(r"[\s,]+", reply) if w.strip('.,"[]-')]


def summary(path: Path) -> dict:
    js = judgments(path.read_text())
    result = {"file": str(path), "judgments": len(js)}
    for task in ("arithmetic", "chat"):
        pairs = [m for j in js if j["task"] == task for _, c in j["lines"] for m in marks(c, task)]
        same = [said for agree, said in pairs if agree]
        differ = [not said for agree, said in pairs if not agree]
        result[f"{task}/marks"] = {"same_marked_equal": sum(same), "same": len(same),
                                   "differing_marked_bang": sum(differ), "differing": len(differ)}
    lines = [(j, a, c) for j in js if j["task"] == "arithmetic" for a, c in j["lines"]]
    copied = [re.match(r"(\S+) vs (\S+?),", c) for _, _, c in lines]
    result["arithmetic/copying"] = {
        "lines": len(lines),
        "reply_result": sum(bool(m) and m.group(1) == a.rsplit("|", 1)[-1].strip()
                            for m, (_, a, _) in zip(copied, lines)),
        "own_result": sum(bool(m) and m.group(2) == j["own"].rsplit("|", 1)[-1].strip()
                          for m, (j, _, _) in zip(copied, lines))}
    n = exact = first = count = quoted = quoted_right = 0
    for j in js:
        if j["task"] != "instructions":
            continue
        want = re.search(r"(?:include|avoid) '(\w+)'", j["question"])
        for reply, check in j["lines"]:
            n += 1
            words = words_of(reply)[:8]
            listed = re.findall(r"\d+ (\S+?)[+?](?= |$)", check.split(";")[0])
            exact += listed == words
            first += bool(listed and words and listed[0] == words[0])
            count += len(listed) == len(words)
            if want:
                quoted += 1
                named = re.search(r"(?:has|no) '(\w+)'", check)
                quoted_right += bool(named and named.group(1) == want.group(1))
    result["instructions/copying"] = {"lines": n, "word_list_exact": exact, "first_word": first,
                                      "word_count": count, "quoted_word_lines": quoted,
                                      "quoted_word_right": quoted_right}
    return result


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", type=Path)
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    results = [summary(f) for f in args.files]
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    for r in results:
        m_a, m_c = r["arithmetic/marks"], r["chat/marks"]
        ins, ar = r["instructions/copying"], r["arithmetic/copying"]
        print(f"{r['file']}: {r['judgments']} judgments\n"
              f"  arithmetic marks: '=' {m_a['same_marked_equal']}/{m_a['same']}, "
              f"'!' {m_a['differing_marked_bang']}/{m_a['differing']}; "
              f"results copied: reply's {ar['reply_result']}/{ar['lines']}, "
              f"own {ar['own_result']}/{ar['lines']}\n"
              f"  chat marks: '=' {m_c['same_marked_equal']}/{m_c['same']}, "
              f"'!' {m_c['differing_marked_bang']}/{m_c['differing']}\n"
              f"  instructions: quoted word {ins['quoted_word_right']}/{ins['quoted_word_lines']}, "
              f"word list exact {ins['word_list_exact']}/{ins['lines']}, first word "
              f"{ins['first_word']}/{ins['lines']}, word count {ins['word_count']}/{ins['lines']}")


if __name__ == "__main__":
    main()
