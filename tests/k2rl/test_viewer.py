"""`k2rl rollouts` and `k2rl status` (k2rl.viewer): a run's Redis read from outside the run,
live (its own server, never a second one) or finished (started from its folder).

`seen_run` is one tiny `k2rl train` run, shared by this module, test_loggers and test_report
(cached in the session's temporary folder): while it runs, `k2rl status` is polled until it
shows a step and `k2rl rollouts` reads the live server."""
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from k2rl import cli, viewer
from k2rl.runtime.redis_server import connect, start_redis
from k2rl.runtime.store import RunStore
from k2rl.step.group import Group, Request, Status, Trajectory

ROOT = Path(__file__).resolve().parents[2]
TINY = ["configs/tiny.yaml"]
BACKENDS = "log.backends=[jsonl,redis,tensorboard" + (
    ",wandb]" if __import__("importlib").util.find_spec("wandb") else "]")


def run_cli(*args) -> tuple[int, str]:
    """`k2rl ARGS` in this process: (exit status, stdout)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main([str(a) for a in args])
    return code, out.getvalue()


def seen_run(tmp_path_factory) -> dict:
    """A tiny run (all log backends installed), watched while it runs; made once a session."""
    base = tmp_path_factory.getbasetemp() / "seen-run"
    record = base / "record.json"
    if record.exists():
        return json.loads(record.read_text())
    base.mkdir(exist_ok=True)
    run = base / "see"
    env = {**os.environ, "K2RL_RUN_DIR_FILE": str(base / "run-dir.txt")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "k2rl", "train", *TINY, f"log.run_dir={base}", "log.run_name=see",
         "log.progress=true", BACKENDS], cwd=ROOT, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    live_status, live_rollouts, pid_files = None, None, set()
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        if live_status is None and viewer.live_redis(run):
            pid_files.add((run / "redis" / "redis.pid").read_text())
            code, text = run_cli("status", run)
            if code == 0 and re.search(r"^step [1-9]", text, re.M):  # a trained step
                live_status = text
                live_rollouts = run_cli("rollouts", run, "--limit", "2")[1]
                pid_files.add((run / "redis" / "redis.pid").read_text())
        time.sleep(0.2)
    stdout, stderr = proc.communicate(timeout=max(deadline - time.monotonic(), 1))
    if proc.returncode != 0:
        raise AssertionError(f"the tiny run failed ({proc.returncode}):\n{stderr[-3000:]}")
    out = {"run": str(run), "stdout": stdout, "stderr": stderr, "live_status": live_status,
           "live_rollouts": live_rollouts, "pid_files": sorted(pid_files),
           "run_dir_file": (base / "run-dir.txt").read_text().strip()}
    record.write_text(json.dumps(out))
    return out


@pytest.fixture(scope="module")
def seen(tmp_path_factory):
    return seen_run(tmp_path_factory)


def tool_group(step: int = 1) -> Group:
    """A Calculator group whose first trajectory called the tool and copied its result."""
    messages = [{"role": "user", "content": "37*48="},
                {"role": "assistant", "content": "calc(37*48)"},
                {"role": "tool", "content": "1776"},
                {"role": "assistant", "content": "1776"}]
    good = Trajectory(f"{step}:0:0", "k2rl/Calculator-v1", "tool_use", "calc:37*48", 0,
                      ids=[1, 2, 3], mask=[0, 1, 1], logp_engine=[-0.1, -0.2],
                      messages=messages, rewards={"task": 1.0}, correct=True,
                      status=Status.DONE, n_tokens=9, turns=2, opening=1)
    bad = Trajectory(f"{step}:0:1", "k2rl/Calculator-v1", "tool_use", "calc:37*48", 1,
                     messages=[*messages[:1], {"role": "assistant", "content": "17"}],
                     rewards={"task": 0.0, "truncation": -0.5}, status=Status.TRUNCATED,
                     n_tokens=30, turns=1, opening=1)
    return Group(Request("k2rl/Calculator-v1", 7, k=2), step, [good, bad])


@pytest.fixture
def stored_run(tmp_path):
    """A finished run folder whose Redis holds one tool-calling Calculator group (server
    stopped, as after a run)."""
    run = tmp_path / "toolrun"
    with start_redis(run) as server:
        store = RunStore(connect(server.url), run.name)
        store.add_rollouts(1, [tool_group(1)])
        store.add_rollouts(2, [tool_group(2)])
    (run / "config.yaml").write_text("train:\n  steps: 2\n")
    return run


def test_rollouts_print_the_conversation_with_its_tool_turn(stored_run):
    code, text = run_cli("rollouts", stored_run, "--step", "1", "--best", "--limit", "1")
    assert code == 0
    lines = text.splitlines()
    assert lines[0].startswith("── step 1 · group 1:0 · sample 0 · tool_use (k2rl/Calculator-v1)")
    assert "reward 1.000 (task 1.000)" in lines[1] and "correct yes" in lines[1]
    assert "truncated no" in lines[1]
    roles = [x.split(":")[0] for x in lines[2:]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert lines[4].split() == ["tool:", "1776"]
    assert not viewer.live_redis(stored_run)  # the server started to read it was stopped


def test_rollouts_worst_json_and_task_filter(stored_run):
    code, text = run_cli("rollouts", stored_run, "--worst", "--limit", "1", "--json")
    rows = json.loads(text)
    assert code == 0 and len(rows) == 1
    worst = rows[0]
    assert worst["rewards"] == {"task": 0.0, "truncation": -0.5} and worst["reward"] == -0.5
    assert worst["truncated"] is True and worst["correct"] is False and worst["step"] in (1, 2)
    assert not set(viewer.TOKEN_FIELDS) & set(worst)  # no token ids in the JSON
    code, text = run_cli("rollouts", stored_run, "--task", "arithmetic")
    assert code == 0 and text.startswith("no stored trajectories of task arithmetic")
    code, text = run_cli("rollouts", stored_run, "--task", "k2rl/Calculator-v1", "--limit", "0",
                         "--json")
    assert len(json.loads(text)) == 4


def test_a_live_servers_run_is_read_on_that_server(stored_run):
    """A run whose redis-server is serving (its pid file names it): rollouts and status connect
    to it; no second server is started on the folder (that would stop the live one)."""
    with start_redis(stored_run) as server:
        pid_file = (stored_run / "redis" / "redis.pid").read_text()
        assert viewer.live_redis(stored_run.resolve()) == server.url
        RunStore(connect(server.url), stored_run.name).set_state(status="running",
                                                                 worker_nodes=["a" * 56])
        code, text = run_cli("rollouts", stored_run, "--limit", "1")
        assert code == 0 and "step 2" in text
        code, text = run_cli("status", stored_run)
        assert code == 0 and f"Redis {server.url} (live)" in text and "workers: 1 on 1" in text
        assert server.process.poll() is None  # still serving
        assert (stored_run / "redis" / "redis.pid").read_text() == pid_file


def test_heldout_answers_of_an_evaluation_show_what_the_model_answered(stored_run):
    """`k2rl rollouts --heldout`: the greedy answers stored at each evaluation (step 0, 2)."""
    with start_redis(stored_run) as server:
        store = RunStore(connect(server.url), stored_run.name)
        store.add_heldout(0, [tool_group(0)])
        heldout = tool_group(0)
        heldout.trajectories[0].messages[-1]["content"] = "1777"
        store.add_heldout(2, [heldout])
    code, text = run_cli("rollouts", stored_run, "--heldout", "--step", "2", "--task",
                         "tool_use", "--worst", "--limit", "1")
    assert code == 0 and text.startswith("── step 2 · group 0:0 · sample 1 · tool_use")
    code, text = run_cli("rollouts", stored_run, "--heldout", "--best", "--limit", "1")
    assert code == 0 and "step 2 " in text and "\nassistant: 1777" in text  # the newest
    code, text = run_cli("rollouts", stored_run, "--heldout", "--step", "0", "--best", "--json")
    assert [r["step"] for r in json.loads(text)] == [0, 0]
    assert json.loads(text)[0]["messages"][-1]["content"] == "1776"
    code, text = run_cli("rollouts", stored_run, "--heldout", "--step", "1")
    assert code == 0 and text.startswith("no stored held-out answers of step 1")


def test_the_newest_rollouts_read_only_the_newest_steps(stored_run):
    """Without --step, `k2rl rollouts` reads back from the newest step only as far as it needs:
    an unreadable step 1 does not matter for the newest 2 trajectories (both of step 2)."""
    with start_redis(stored_run) as server:
        store = RunStore(connect(server.url), stored_run.name)
        store.client.lset(store.key("rollouts:1"), 0, "not json")
    code, text = run_cli("rollouts", stored_run, "--limit", "2", "--json")
    assert code == 0 and [r["step"] for r in json.loads(text)] == [2, 2]


def test_status_of_a_stopped_run_says_how_to_resume(stored_run):
    # as an earlier k2rl wrote it: fields missing, and one this k2rl does not know
    (stored_run / "state.json").write_text(json.dumps({"last_step": 1, "status": "running",
                                                       "best": {"reward": 0.5}}))
    code, text = run_cli("status", stored_run)
    assert code == 0 and text.startswith("run toolrun (")
    assert "stopped, not running; last checkpoint at step 1 of 2: resume with `k2rl train " \
           "--resume" in text


def test_status_of_a_live_tiny_run_shows_its_step_speed_and_workers(seen):
    text = seen["live_status"]
    assert text, f"`k2rl status` never showed a step of the live run:\n{seen['stderr'][-2000:]}"
    lines = text.splitlines()
    assert lines[0].startswith("run see (") and "(live)" in lines[0]
    step = lines[1]
    assert step.startswith("step ") and "/4 (" in step and "last logged" in step
    assert "steps/s" in step and "ETA" in step
    assert any(x.startswith("workers: 1 on 1 node(s)") for x in lines)
    assert "last metrics (step" in text and "train/all/reward" in text
    assert "held-out accuracy (step 0):" in text or "held-out accuracy (step 2):" in text
    assert len(seen["pid_files"]) == 1  # status and rollouts used the run's own server
    assert seen["live_rollouts"].startswith("── step ")


def test_status_and_rollouts_of_the_finished_tiny_run(seen):
    run = Path(seen["run"])
    code, text = run_cli("status", run)  # finished: said so, as a person reads it
    assert code == 0 and text.startswith("run see (") and ": finished, 4 of 4 steps, 32 " \
        "trajectories stored" in text.splitlines()[0]
    assert re.search(r"^  arithmetic +\d\.\d{3} +\d\.\d{3} +8$", text, re.M)
    code, text = run_cli("status", run, "--json")  # the raw state
    assert code == 0 and json.loads(text)["last_step"] == 4
    assert json.loads(text)["status"] == "finished"
    code, text = run_cli("rollouts", run, "--heldout", "--step", "4", "--task", "arithmetic",
                         "--worst", "--limit", "0", "--json")
    assert code == 0 and len(json.loads(text)) == 8  # every held-out answer of the last eval
    code, text = run_cli("rollouts", run, "--limit", "0", "--json")
    rows = json.loads(text)
    assert code == 0 and len(rows) == 4 * 4 * 2
    assert {r["task"] for r in rows} == {"arithmetic", "tool_use"}
    code, text = run_cli("rollouts", run, "--task", "tool_use", "--limit", "3")
    blocks = text.split("\n\n")
    assert code == 0 and len(blocks) == 3
    for block in blocks:
        lines = [x for x in block.splitlines() if not x.startswith("answer read:")]
        assert "tool_use (k2rl/Calculator-v1)" in lines[0] and lines[2].startswith("user:")
        assert lines[3].startswith("assistant:")
    # the tiny model may or may not call the calculator; where it did, the tool turn shows
    called = [r for r in rows if any(m["role"] == "tool" for m in r["messages"])]
    for r in called[:1]:
        code, text = run_cli("rollouts", run, "--step", r["step"], "--task", "tool_use",
                             "--limit", "0")
        assert "\ntool:" in text


def test_configured_url_reads_a_run_written_before_keys_moved(tmp_path):
    """`k2rl status`/`show` open runs whose config.yaml predates a moved key (rollout.threads,
    model.sft_steps): only redis.url is read from it."""
    from k2rl.viewer import configured_url

    (tmp_path / "config.yaml").write_text(
        "model:\n  sft_steps: 800\nrollout:\n  threads: 2\nredis:\n  url: redis://h:1/0\n")
    assert configured_url(tmp_path) == "redis://h:1/0"
    (tmp_path / "config.yaml").write_text("model:\n  sft_steps: 800\n")
    assert configured_url(tmp_path) is None
