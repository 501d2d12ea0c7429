"""`k2rl critic eval`: table and JSON on a small file with known answers; bad input files."""
import json

import pytest

from critic.compare import Judgment
from k2rl import cli
from k2rl.bootstrap.model import build_tokenizer
from k2rl.step import critic_engine


@pytest.fixture
def pairs_file(tmp_path):
    rows = [{"prompt": "2+2=", "chosen": "4", "rejected": "44", "task": "arithmetic"},
            {"prompt": "3+3=", "chosen": "6", "rejected": "66", "task": "arithmetic"},
            {"prompt": "9*9=", "chosen": "calc(9*9) | 81 | 81", "rejected": "8", "task": "tool_use"}]
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    build_tokenizer().save_pretrained(tmp_path / "model")  # the critic's layout needs it
    (tmp_path / "model" / "config.json").write_text("{}")
    return path


def shorter_answer_wins(model_dir, max_model_len, default=None, layout="auto"):
    """A critic that prefers the shorter answer: right on arithmetic, wrong on tool use."""
    shorter_answer_wins.default = default  # the layout a model k2rl did not build checks in
    shorter_answer_wins.layout = layout

    def critic(comparisons):
        return [Judgment(0.95 if len(c.first) < len(c.second) else 0.05,
                         0.95 if len(c.second) < len(c.first) else 0.05, f"work on {c.prompt}",
                         (f"check {c.first}", f"check {c.second}")) for c in comparisons]
    return critic


def test_eval_reports_known_accuracy(pairs_file, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(critic_engine, "standalone_critic", shorter_answer_wins)
    args = ["critic", "eval", "--model", str(pairs_file.parent / "model"), "--pairs",
            str(pairs_file), "--log", str(tmp_path / "eval.log")]
    assert cli.main(args + ["--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == 3 and result["accuracy"] == pytest.approx(2 / 3)
    assert result["by_task"]["arithmetic"]["accuracy"] == 1.0
    # without a run, the default config's model.default: the layout training would follow
    assert shorter_answer_wins.default.instr_compare is True
    assert result["by_task"]["tool_use"]["accuracy"] == 0.0
    assert result["swap_consistency"] == 1.0 and result["tie_rate"] == 0.0
    assert result["brier"] == pytest.approx((2 * 0.05 ** 2 + 0.95 ** 2) / 3)
    assert cli.main(args + ["--show", "2"]) == 0
    out = capsys.readouterr().out
    assert "task=tool_use" in out and "consist." in out and "brier" in out
    assert "critic's own answer: work on 2+2=" in out and "check:  check 44" in out
    assert "[2]" in out and "[3]" not in out
    assert shorter_answer_wins.layout == "auto"
    assert cli.main(args + ["--layout", "chat"]) == 0 and shorter_answer_wins.layout == "chat"


def test_bad_pairs_files_are_one_line_errors(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "a", "chosen": "b", "rejected": "c"}\n{"prompt": "a"\n')
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    for path, why in ((bad, "line 2 of"), (empty, "has no pairs")):
        assert cli.main(["critic", "eval", "--model", "m", "--pairs", str(path)]) == 2
        err = capsys.readouterr().err
        assert why in err and err.count("\n") == 1
