"""bench/real_peer.py end to end on a 2-layer cut of SmolLM2-135M-Instruct (its real tokenizer,
template and first layers): the start evaluated, one k2rl step and one TRL GRPOTrainer step on
the same prompts, each result evaluated by the same evaluator, both tools' figures written."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("gguf", reason="the gguf package reads GGUF files (make test installs it)")
pytest.importorskip("trl", reason="TRL is the peer (make test installs it: the test extra)")


@pytest.mark.slow
def test_real_peer_writes_both_tools_figures(tmp_path):
    from k2rl.lm.gguf import convert, named_gguf

    model = convert(named_gguf("smollm2"), tmp_path / "smollm2-2", num_layers=2)
    out = tmp_path / "real_peer.json"
    proc = subprocess.run(
        [sys.executable, "bench/real_peer.py", "--steps", "1", "--prompts", "1", "--k", "2",
         "--eval-prompts", "2", "--budget", "16", "--lrs", "5e-5", "--model", str(model),
         "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-2000:]
    assert "TRL GRPO" in proc.stdout and "k2rl" in proc.stdout  # the table
    result = json.loads(out.read_text())
    assert result["versions"]["trl"] and result["versions"]["vllm"] and result["machine"]["cores"]
    assert result["settings"]["matched"] and result["settings"]["not_matched"]
    trl = result["trl"][0]
    assert trl["lr"] == 5e-5 and trl["settings"]["prompt_ids_as_k2rl"]
    assert trl["settings"]["eos_token_ids"] == trl["settings"]["k2rl_stop_ids"]
    assert trl["settings"]["max_completion_length"] == 16
    for run in (result["k2rl"], trl):
        assert len(run["seconds_per_step"]) == 1 and run["seconds_per_step"][0] > 0
        assert run["peak_rss_gib"] > 0
        tasks = run["eval"]["tasks"]
        assert tasks["word_sums"]["n"] == tasks["short_writing"]["n"] == 2
        assert set(run["gain"]) == {"word_sums", "short_writing", "all"}
    # the evaluator and k2rl's own evaluation read the same problems
    own = result["k2rl"]["own_heldout"]["before"]
    assert own["word_sums/n"] == result["start"]["tasks"]["word_sums"]["n"]
