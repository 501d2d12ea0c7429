"""Where a run's metrics go.

Every logged step goes, under the same metric names (e.g. `heldout/tool_use/accuracy`), to
RUN_DIR/metrics.jsonl and the run's Redis stream (always: `k2rl report` reads the one; resume,
the summary and `k2rl status` the other), and to the extra backends of `log.backends`:

- tensorboard: RUN_DIR/tensorboard/ (torch.utils.tensorboard), scalars, the run config as
  hyperparameters (the HParams tab) and as YAML text, held-out trajectories as text;
- wandb: a Weights & Biases run under RUN_DIR/wandb/ (`log.wandb_mode` offline by default:
  files only, nothing sent; `wandb sync` uploads them later), the run config as its config and
  held-out trajectories as a table.

A step with an evaluation is logged with its greedy held-out groups; `log.samples` of them
(spread over the tasks, wrong and right answers in turn) go to the extra backends.

`opened(cfg, run_dir)` creates the run's `RunLogger` and closes it; `current(run_dir)` is what
`controller.log` writes through (only metrics.jsonl and Redis when no logger is open, as when
a test drives `controller.loop` itself).
"""
from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path

import yaml

from k2rl.config import Config, ConfigError, to_dict
from k2rl.viewer import format_markdown

SAMPLES_TAG = "rollouts/heldout"  # TensorBoard text and W&B table of held-out trajectories
WANDB_ID_FILE = "k2rl-run-id"  # in RUN_DIR/wandb: a resumed run continues the same W&B run

_open: dict[Path, RunLogger] = {}


def pick_samples(groups: list, n: int) -> list:
    """Up to n trajectories spread over the tasks (one task after another), within a task a
    wrong answer and a right one in turn, so the sample shows both where there are both."""
    by_task: dict[str, list] = {}
    for g in groups:
        for t in g:
            by_task.setdefault(t.task, []).append(t)
    queues = []
    for ts in by_task.values():
        wrong, right = [t for t in ts if not t.correct], [t for t in ts if t.correct]
        mixed = [t for pair in zip(wrong, right) for t in pair]
        longer = wrong if len(wrong) > len(right) else right
        queues.append(mixed + longer[min(len(wrong), len(right)):])
    out, i = [], 0
    while len(out) < n and any(i < len(q) for q in queues):
        out += [q[i] for q in queues if i < len(q)][:n - len(out)]
        i += 1
    return out


def flat_config(cfg: Config) -> dict[str, object]:
    """The config as dotted keys with int, float, bool or str values (lists and None as text),
    what TensorBoard's hyperparameters accept."""
    out = {}

    def walk(node, prefix):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{prefix}{k}.")
        elif isinstance(node, (bool, int, float, str)):
            out[prefix[:-1]] = node
        else:
            out[prefix[:-1]] = json.dumps(node)

    walk(to_dict(cfg), "")
    return out


class TensorBoard:
    def __init__(self, cfg: Config, run_dir: Path):
        from torch.utils.tensorboard import SummaryWriter
        from torch.utils.tensorboard.summary import hparams

        folder = run_dir / "tensorboard"
        fresh = not folder.exists() or not any(folder.iterdir())
        self.writer = SummaryWriter(log_dir=str(folder), flush_secs=30)
        if fresh:  # a resumed run already wrote them
            config = yaml.safe_dump(to_dict(cfg), sort_keys=False)
            self.writer.add_text("config", "    " + config.replace("\n", "\n    "), 0)
            for summary in hparams(flat_config(cfg), {"heldout/all/accuracy": 0.0}):
                self.writer.file_writer.add_summary(summary)
            self.writer.flush()

    def log(self, step: int, metrics: dict, samples: list) -> None:
        for name, value in metrics.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                self.writer.add_scalar(name, value, step)
        if samples:
            text = "\n\n---\n\n".join(format_markdown(t) for t in samples)
            self.writer.add_text(SAMPLES_TAG, text, step)
        self.writer.flush()  # a live TensorBoard sees each step as it is logged

    def close(self, failed: bool) -> None:
        self.writer.close()


class Wandb:
    COLUMNS = ["step", "task", "prompt_id", "prompt", "conversation", "reward", "rewards",
               "correct", "truncated"]

    def __init__(self, cfg: Config, run_dir: Path):
        try:
            import wandb
        except ImportError:
            raise ConfigError("log.backends has wandb but the wandb package is not installed: "
                              "`pip install 'k2rl[wandb]'`, or drop wandb from log.backends"
                              ) from None
        self.wandb = wandb
        mode = cfg.log.wandb_mode
        # The process-wide settings too: wandb's own telemetry asks the server otherwise, even
        # for an offline run (a network request at init).
        wandb.setup(settings=wandb.Settings(mode=mode))
        folder = run_dir / "wandb"
        folder.mkdir(parents=True, exist_ok=True)
        id_file = folder / WANDB_ID_FILE
        run_id = id_file.read_text().strip() if id_file.exists() else _run_id()
        id_file.write_text(run_id + "\n")
        self.run = wandb.init(
            project=cfg.log.wandb_project, entity=cfg.log.wandb_entity, name=run_dir.name,
            id=run_id, resume="allow", dir=str(run_dir), mode=mode, config=to_dict(cfg),
            settings=wandb.Settings(quiet=True, silent=True, console="off"))

    def log(self, step: int, metrics: dict, samples: list) -> None:
        data = dict(metrics)
        if samples:
            data[SAMPLES_TAG] = self.wandb.Table(columns=self.COLUMNS, data=[
                [step, t.task, t.prompt_id, t.prompt,
                 "\n".join(f"{m['role']}: {m['content']}" for m in t.messages),
                 t.reward, json.dumps(t.rewards), t.correct, t.truncated] for t in samples])
        self.run.log(data, step=step)

    def close(self, failed: bool) -> None:
        self.run.finish(exit_code=1 if failed else 0)


def _run_id() -> str:
    """A fresh W&B run id: 8 lowercase letters and digits."""
    import secrets
    import string

    return "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(8))


BACKENDS = {"tensorboard": TensorBoard, "wandb": Wandb}


class RunLogger:
    """A run's metrics to metrics.jsonl, its Redis stream and the extra backends."""

    def __init__(self, cfg: Config | None, run_dir: Path):
        self.run_dir = Path(run_dir)
        self.samples = cfg.log.samples if cfg else 0
        self.backends = []
        try:
            for name in (cfg.log.backends if cfg else ()):
                if name in BACKENDS:
                    self.backends.append(BACKENDS[name](cfg, self.run_dir))
        except BaseException:
            self.close(failed=True)
            raise

    def log(self, step: int, metrics: dict, store, groups=()) -> None:
        with open(self.run_dir / "metrics.jsonl", "a") as f:
            f.write(json.dumps({"step": step, **metrics}) + "\n")
        store.add_metrics(step, metrics)
        if self.backends:
            samples = pick_samples(list(groups), self.samples)
            for backend in self.backends:
                backend.log(step, metrics, samples)

    def close(self, failed: bool = False) -> None:
        backends, self.backends = self.backends, []
        for backend in backends:
            try:
                backend.close(failed)
            except Exception as e:  # a backend that cannot flush must not hide the run's result
                print(f"k2rl: could not close the {type(backend).__name__} logger: {e}",
                      file=sys.stderr)


def current(run_dir: Path) -> RunLogger:
    """The open logger of `run_dir`, or one that writes only metrics.jsonl and Redis."""
    return _open.get(Path(run_dir)) or RunLogger(None, run_dir)


@contextmanager
def opened(cfg: Config, run_dir: Path):
    """The run's logger, open while the run is (controller.train)."""
    logger = RunLogger(cfg, run_dir)
    _open[Path(run_dir)] = logger
    failed = True
    try:
        yield logger
        failed = False
    finally:
        _open.pop(Path(run_dir), None)
        logger.close(failed)
