"""Where a run's metrics go (k2rl.loggers): metrics.jsonl, Redis, TensorBoard and W&B under the
same names, the config as hyperparameters, held-out samples at each evaluation; and a quiet
terminal (library warnings and the workers' logs in the run folder)."""
import json
from pathlib import Path

import pytest

from k2rl import loggers
from k2rl.config import ConfigError, LogConfig, load_config
from tests.k2rl.test_viewer import seen_run, tool_group

EXPECTED_SCALARS = {"heldout/tool_use/accuracy", "heldout/arithmetic/accuracy",
                    "heldout/all/accuracy", "heldout/tool_use/n", "train/all/reward",
                    "train/tool_use/reward", "train/arithmetic/truncated", "train/all/length",
                    "loss", "logp_gap", "sync_seconds", "time/rollout", "time/train",
                    "time/sync", "time/step"}


@pytest.fixture(scope="module")
def seen(tmp_path_factory):
    return seen_run(tmp_path_factory)


def events(folder: Path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(folder), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    return acc


class FakeStore:
    def __init__(self):
        self.metrics = []

    def add_metrics(self, step, metrics):
        self.metrics.append((step, metrics))


def test_the_backends_are_checked_with_one_sentence(monkeypatch):
    assert LogConfig().backends == ["jsonl", "redis", "tensorboard"]
    with pytest.raises(ConfigError, match=r"log\.backends has unknown \['mlflow'\]"):
        load_config(None, ["log.backends=[jsonl,redis,mlflow]"])
    with pytest.raises(ConfigError, match=r"log\.backends must keep jsonl and redis"):
        load_config(None, ["log.backends=[tensorboard]"])
    with pytest.raises(ConfigError, match=r"log\.wandb_mode must be one of offline, online"):
        load_config(None, ["log.wandb_mode=cloud"])
    monkeypatch.setattr(LogConfig, "installed", staticmethod(lambda package: False))
    with pytest.raises(ConfigError) as e:
        load_config(None, ["log.backends=[jsonl,redis,wandb]", "log.progress=false"])
    assert "wandb package is not installed: `pip install 'k2rl[wandb]'`" in str(e.value)
    assert "\n" not in str(e.value)


def test_samples_spread_over_tasks_with_wrong_and_right_answers():
    calc = tool_group()  # one right, one wrong
    picked = loggers.pick_samples([calc], 2)
    assert [t.correct for t in picked] == [False, True]
    assert loggers.pick_samples([calc], 0) == [] and len(loggers.pick_samples([calc], 9)) == 2


def test_a_run_logger_writes_every_backend_under_the_same_names(tmp_path):
    cfg = load_config(None, ["log.backends=[jsonl,redis,tensorboard]", "log.samples=2"])
    store = FakeStore()
    with loggers.opened(cfg, tmp_path):
        loggers.current(tmp_path).log(0, {"heldout/tool_use/accuracy": 0.25}, store)
        loggers.current(tmp_path).log(1, {"heldout/tool_use/accuracy": 0.5, "loss": 1.5}, store,
                                      [tool_group()])
    assert [json.loads(x)["step"] for x in (tmp_path / "metrics.jsonl").open()] == [0, 1]
    assert store.metrics[1] == (1, {"heldout/tool_use/accuracy": 0.5, "loss": 1.5})
    acc = events(tmp_path / "tensorboard")
    assert [(e.step, e.value) for e in acc.Scalars("heldout/tool_use/accuracy")] == [
        (0, 0.25), (1, 0.5)]
    text = acc.Tensors(f"{loggers.SAMPLES_TAG}/text_summary")
    assert [e.step for e in text] == [1]
    assert "tool: 1776" in text[0].tensor_proto.string_val[0].decode()
    config = acc.Tensors("config/text_summary")[0].tensor_proto.string_val[0].decode()
    assert "prompts_per_step: 32" in config
    assert set(acc.PluginTagToContent("hparams")) == {
        "_hparams_/experiment", "_hparams_/session_start_info", "_hparams_/session_end_info"}
    # no open logger (a test driving controller.loop): metrics.jsonl and Redis only
    loggers.current(tmp_path).log(2, {"loss": 1.0}, store)
    assert len(store.metrics) == 3 and len(list((tmp_path / "tensorboard").iterdir())) == 1


def test_tensorboard_of_a_tiny_run_has_the_metric_names_of_metrics_jsonl(seen):
    run = Path(seen["run"])
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    names = {k for m in lines for k in m} - {"step"}
    acc = events(run / "tensorboard")
    scalars = set(acc.Tags()["scalars"])
    assert EXPECTED_SCALARS <= scalars and scalars == names  # the same names in both
    assert [e.step for e in acc.Scalars("heldout/tool_use/accuracy")] == [0, 2, 4]
    assert [e.step for e in acc.Scalars("train/all/reward")] == [1, 2, 3, 4]
    for step, m in zip([1, 2, 3, 4], lines[1:]):
        assert acc.Scalars("time/step")[step - 1].value == pytest.approx(m["time/step"])
    samples = acc.Tensors(f"{loggers.SAMPLES_TAG}/text_summary")
    assert [e.step for e in samples] == [0, 2, 4]  # each evaluation
    text = samples[-1].tensor_proto.string_val[0].decode()
    assert text.count("**tool_use**") == 2 and text.count("**arithmetic**") == 2
    assert "    user: " in text  # the conversation, as a Markdown code block
    assert "_hparams_/experiment" in acc.PluginTagToContent("hparams")


def test_an_offline_wandb_run_is_written_in_the_run_folder(seen):
    pytest.importorskip("wandb")
    run = Path(seen["run"])
    run_id = (run / "wandb" / loggers.WANDB_ID_FILE).read_text().strip()
    offline = list((run / "wandb").glob(f"offline-run-*-{run_id}"))
    assert len(offline) == 1, list((run / "wandb").iterdir())
    assert (offline[0] / f"run-{run_id}.wandb").stat().st_size > 0
    tables = list(offline[0].glob("files/media/table/rollouts/heldout_*.table.json"))
    assert len(tables) == 3  # steps 0, 2 and 4
    table = json.loads(tables[0].read_text())
    assert table["columns"] == loggers.Wandb.COLUMNS and len(table["data"]) == 4
    assert "W&B (offline): wandb sync" in seen["stdout"]


def test_the_terminal_shows_the_bar_and_k2rls_lines_and_the_logs_are_in_the_run_folder(seen):
    run = Path(seen["run"])
    out, err = seen["stdout"], seen["stderr"]
    said, folder = out.splitlines()[:2]  # where its default model came from, then the folder
    assert said.startswith("k2rl: default model ") and said.endswith("built on this machine")
    assert folder == (f"k2rl: run folder {run} (library warnings: driver.log, the workers' "
                      "logs: workers.log; `k2rl train -v` shows them here)")
    assert "held-out accuracy (greedy" in out and f"tensorboard --logdir {run / 'tensorboard'}" in out
    for noise in ("HybridWorker pid=", "Token authentication", "Warning", "Loading weights",
                  "Started a local Ray instance", "wandb:"):
        assert noise not in out + err, noise
    assert "rl: 100%" in err  # the one progress bar
    workers = (run / "workers.log").read_text()
    assert "==== Ray worker process" in workers and ":actor_name:HybridWorker" in workers
    assert "Writing model shards" in workers  # what a worker printed
    assert "INFO ray._private.worker: Started a local Ray instance" in (run / "driver.log").read_text()
    assert seen["run_dir_file"] == str(run)  # K2RL_RUN_DIR_FILE, for `make train`
