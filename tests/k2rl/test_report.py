"""`k2rl report RUN_DIR` (k2rl.report): PNG plots and report.md in RUN_DIR/report/, from
metrics.jsonl; the held-out before/after printing is kept."""
import json
import struct
from pathlib import Path

import pytest

from k2rl import report
from tests.k2rl.test_viewer import run_cli, seen_run

NARROW = (int(report.FIG_SIZE[0] * report.DPI), int(report.FIG_SIZE[1] * report.DPI))
WIDE = (int(report.WIDE_SIZE[0] * report.DPI), int(report.WIDE_SIZE[1] * report.DPI))
PLOTS = {"heldout_accuracy.png": NARROW, "train_reward.png": NARROW,
         "length_truncation.png": WIDE, "time_per_phase.png": NARROW, "logp_gap.png": NARROW,
         "sync_seconds.png": NARROW}


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk; fails if the file is not a PNG."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", path
    return struct.unpack(">II", head[16:24])


@pytest.fixture(scope="module")
def seen(tmp_path_factory):
    return seen_run(tmp_path_factory)


def synthetic_run(folder: Path) -> Path:
    """A run folder with metrics of 6 steps, a critic and two tasks (one gains accuracy)."""
    rows = [{"step": 0, "heldout/math/accuracy": 0.2, "heldout/math/n": 50.0,
             "heldout/chat/accuracy": 0.5, "heldout/chat/n": 20.0, "heldout/all/accuracy": 0.3,
             "heldout/all/n": 70.0}]
    for step in range(1, 7):
        row = {"step": step, "time/rollout": 2.0, "time/critic": 0.5, "time/train": 3.0,
               "time/sync": 0.1, "time/step": 6.0, "logp_gap": 1e-7 * step,
               "sync_seconds": 0.05, "train/math/reward": 0.1 * step,
               "train/chat/reward": 0.5, "train/all/reward": 0.05 * step + 0.25}
        for task in ("math", "chat", "all"):
            row |= {f"train/{task}/truncated": 0.1, f"train/{task}/length": 40.0 + step}
        if step % 3 == 0:
            row |= {"heldout/math/accuracy": 0.2 + 0.1 * step, "heldout/math/n": 50.0,
                    "heldout/chat/accuracy": 0.5, "heldout/chat/n": 20.0,
                    "heldout/all/accuracy": 0.4, "heldout/all/n": 70.0,
                    "critic/accuracy": 0.5 + 0.02 * step, "critic/n": 120.0}
        rows.append(row)
    run = folder / "synth"
    run.mkdir()
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows)
                                       + json.dumps(rows[-1]) + "\n")  # step 6 twice
    (run / "config.yaml").write_text("train:\n  steps: 6\ntasks:\n  - {id: k2rl/Math-v0}\n")
    return run


def test_the_report_of_a_run_with_a_critic(tmp_path):
    run = synthetic_run(tmp_path)
    page = report.write_report(run)
    assert page == run / "report" / "report.md"
    sizes = {p.name: png_size(p) for p in page.parent.glob("*.png")}
    assert sizes == PLOTS | {"critic_accuracy.png": NARROW}
    text = page.read_text()
    assert "| math | 0.200 | 0.800 | 50 |" in text and "| chat | 0.500 | 0.500 | 20 |" in text
    assert text.index("| math") < text.index("| all")  # "all" last
    for name in sizes:
        assert f"]({name})" in text  # embedded, relative to report.md
    assert "Not in this run" not in text
    assert report.heldout_table(report.read_metrics(run))[0] == ("chat", 0.5, 0.5, 20.0)
    assert [r["step"] for r in report.read_metrics(run)] == list(range(7))  # no step twice


def test_the_report_reads_the_run_state_of_a_stopped_run(tmp_path):
    """state.json as an earlier k2rl wrote it (fields missing, one unknown) still reads."""
    run = synthetic_run(tmp_path)
    (run / "state.json").write_text(json.dumps({"last_step": 3, "status": "running",
                                                "best": {"reward": 0.5}}))
    text = report.write_report(run).read_text()
    assert "Status: running, last checkpoint at step 3; metrics logged up to step 6." in text


def test_k2rl_report_on_a_tiny_run_writes_the_plots_and_prints_as_before(seen):
    run = Path(seen["run"])
    code, text = run_cli("report", run)
    assert code == 0
    assert "held-out accuracy (greedy, n distinct eval problems)" in text  # as before
    assert "  time/step" in text  # the last step's metrics, as before
    page = run / "report" / "report.md"
    assert text.strip().splitlines()[-1] == f"report: {page} (6 plots)"
    assert {p.name: png_size(p) for p in page.parent.glob("*.png")} == PLOTS
    md = page.read_text()
    assert "| tool_use | 0." in md and "| 8 |" in md
    assert "- Critic accuracy on its fixed held-out pairs" in md  # not measured in a tiny run
    code, text = run_cli("report", "--quiet", run)
    assert code == 0 and text == f"report: {page} (6 plots)\n"


def test_report_of_a_folder_without_metrics_is_one_clear_error(tmp_path, capsys):
    assert run_cli("report", tmp_path)[0] == 2
    assert "metrics.jsonl does not exist" in capsys.readouterr().err
