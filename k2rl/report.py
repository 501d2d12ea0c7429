"""`k2rl report RUN_DIR`: plots of a run and a Markdown page that shows them.

Read from RUN_DIR/metrics.jsonl (so it works on a finished, a stopped or a live run), written to
RUN_DIR/report/: one PNG per figure (matplotlib, Agg backend: no display needed) and report.md,
which embeds them after a table of held-out accuracy before and after with n.

    heldout_accuracy.png    greedy held-out accuracy per task over steps, n in the legend
    train_reward.png        mean training reward per task
    critic_accuracy.png     the policy as critic on its fixed held-out pairs (when measured)
    length_truncation.png   truncation rate and mean length per task (training rollouts)
    time_per_phase.png      seconds per step in rollout, critic, train, sync and the rest
    logp_gap.png            engine-vs-trainer log-prob gap
    sync_seconds.png        seconds of the weight sync into the engine
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from k2rl.runtime.store import RunState

FIG_SIZE = (8.0, 4.5)  # inches, at DPI: 800 x 450 pixels
WIDE_SIZE = (11.0, 4.5)  # two panels side by side: 1100 x 450
DPI = 100
PHASES = (("time/rollout", "rollout"), ("time/critic", "critic"), ("time/train", "train"),
          ("time/sync", "sync"))


class Figure:
    """One written figure: file name, title, and what it shows."""

    def __init__(self, name: str, title: str, note: str = ""):
        self.name, self.title, self.note = name, title, note


def read_metrics(run: Path) -> list[dict]:
    """The logged steps of metrics.jsonl, one per step (a step logged twice, as by a run
    resumed after a crash between the file and Redis, counts once: the later line)."""
    path = run / "metrics.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: is {run} a k2rl run folder?")
    by_step = {}
    for line in path.read_text().splitlines():
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a crash
            by_step[row["step"]] = row
    return [by_step[s] for s in sorted(by_step)]


def series(rows: list[dict], key: str) -> tuple[list[int], list[float]]:
    pts = [(r["step"], r[key]) for r in rows
           if isinstance(r.get(key), (int, float)) and not math.isnan(r[key])]
    return [p[0] for p in pts], [p[1] for p in pts]


def tasks_of(rows: list[dict], prefix: str, suffix: str) -> list[str]:
    """Task names of keys `prefix/<task>/suffix`, "all" last."""
    found = {k.split("/")[1] for r in rows for k in r
             if k.startswith(prefix + "/") and k.endswith("/" + suffix) and k.count("/") == 2}
    return sorted(found - {"all"}) + (["all"] if "all" in found else [])


def heldout_table(rows: list[dict]) -> list[tuple[str, float | None, float | None, float | None]]:
    """(task, before, after, n) of held-out accuracy: the first and the last evaluation."""
    evals = [r for r in rows if any(k.startswith("heldout/") for k in r)]
    if not evals:
        return []
    before, after = evals[0], evals[-1]
    out = []
    for task in tasks_of(evals, "heldout", "accuracy"):
        key = f"heldout/{task}/accuracy"
        out.append((task, before.get(key), after.get(key),
                    after.get(f"heldout/{task}/n", before.get(f"heldout/{task}/n"))))
    return out


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _style(ax, title: str, ylabel: str, share: bool = False) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.set_title(title)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole
    if share:  # accuracies and rates: the whole 0..1 range, so a flat line reads as its value
        ax.set_ylim(-0.03, 1.03)
    ax.grid(alpha=0.3)


def _per_task(ax, rows: list[dict], prefix: str, suffix: str, n_key: str | None = None) -> bool:
    drawn = False
    for task in tasks_of(rows, prefix, suffix):
        steps, values = series(rows, f"{prefix}/{task}/{suffix}")
        if not steps:
            continue
        label = task
        if n_key:
            ns = series(rows, f"{prefix}/{task}/{n_key}")[1]
            label += f" (n={ns[-1]:.0f})" if ns else ""
        ax.plot(steps, values, marker="o", markersize=3, label=label,
                linestyle="--" if task == "all" else "-", color="black" if task == "all" else None)
        drawn = True
    if drawn:
        _legend(ax)
    return drawn


def _legend(ax) -> None:
    """The legend right of the plot, where it hides no line or bar."""
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def _save(fig, out: Path, name: str) -> None:
    fig.tight_layout()
    fig.savefig(out / name, dpi=DPI)


class _Page:
    """The figures of one report as they are drawn: the written ones, and the titles of those
    the run has nothing for (whose stale files from an earlier report are removed)."""

    def __init__(self, out: Path):
        self.out, self.plt = out, _plt()
        self.figures: list[Figure] = []
        self.missing: list[str] = []
        out.mkdir(exist_ok=True)

    def add(self, name: str, title: str, ylabel: str, draw, note: str = "",
            share: bool = False) -> None:
        """Draw a one-panel figure (`draw(ax) -> bool`: whether it had anything to plot),
        styled with its title and y label, and keep it."""
        def styled(ax) -> bool:
            if not draw(ax):
                return False
            _style(ax, title, ylabel, share)
            return True
        self._keep(name, title, note, self.plt.subplots(figsize=FIG_SIZE), styled)

    def add_wide(self, name: str, title: str, draw, note: str = "") -> None:
        """Two panels side by side; `draw((left, right)) -> bool` styles them itself."""
        self._keep(name, title, note, self.plt.subplots(1, 2, figsize=WIDE_SIZE), draw)

    def _keep(self, name: str, title: str, note: str, fig_axes, draw) -> None:
        fig, axes = fig_axes
        try:
            if draw(axes):
                _save(fig, self.out, name)
                self.figures.append(Figure(name, title, note))
            else:
                self.missing.append(title)
                (self.out / name).unlink(missing_ok=True)  # a stale one from an earlier report
        finally:
            self.plt.close(fig)


def _critic(rows: list[dict]):
    def draw(ax) -> bool:
        steps, acc = series(rows, "critic/accuracy")
        if not steps:
            return False
        ns = series(rows, "critic/n")[1]
        ax.plot(steps, acc, marker="o", color="black", linestyle="--",
                label=f"all (n={ns[-1]:.0f} pairs)" if ns else "all")
        _per_task(ax, rows, "critic", "accuracy", "n")  # each family's pairs
        ax.axhline(0.5, color="grey", linestyle=":", label="chance")
        _legend(ax)
        return True
    return draw


def _length_truncation(rows: list[dict]):
    def draw(axes) -> bool:
        left, right = axes
        if not (_per_task(left, rows, "train", "truncated")
                | _per_task(right, rows, "train", "length")):
            return False
        _style(left, "Truncation rate per task", "share truncated", share=True)
        _style(right, "Mean length per task", "tokens")
        return True
    return draw


def _phases(rows: list[dict]):
    def draw(ax) -> bool:
        steps, total = series(rows, "time/step")
        if not steps:
            return False
        by_step = {r["step"]: r for r in rows}
        bottom = [0.0] * len(steps)
        for key, label in PHASES:
            values = [float(by_step[s].get(key, 0.0)) for s in steps]
            if any(values):
                ax.bar(steps, values, bottom=bottom, label=label)
                bottom = [b + v for b, v in zip(bottom, values)]
        rest = [max(t - b, 0.0) for t, b in zip(total, bottom)]
        ax.bar(steps, rest, bottom=bottom, label="other (evaluation, storing)", color="lightgrey")
        ax.plot(steps, total, color="black", marker=".", label="time/step")
        _legend(ax)
        return True
    return draw


def _line(rows: list[dict], key: str):
    def draw(ax) -> bool:
        steps, values = series(rows, key)
        if steps:
            ax.plot(steps, values, marker="o", markersize=3, label=key)
            ax.legend(fontsize=8)
        return bool(steps)
    return draw


def write_report(run_dir: str | Path) -> Path:
    """Write RUN_DIR/report/*.png and report.md; returns the path of report.md."""
    run = Path(run_dir)
    rows = read_metrics(run)
    page = _Page(run / "report")
    page.add("heldout_accuracy.png", "Held-out accuracy per task (greedy)", "accuracy",
             lambda ax: _per_task(ax, rows, "heldout", "accuracy", "n"),
             "n: distinct held-out problems of the task.", share=True)
    page.add("train_reward.png", "Training reward per task", "mean reward",
             lambda ax: _per_task(ax, rows, "train", "reward"))
    page.add("critic_accuracy.png", "Critic accuracy on its fixed held-out pairs", "accuracy",
             _critic(rows), "The policy as pairwise critic; the same pairs at every evaluation.",
             share=True)
    page.add_wide("length_truncation.png", "Truncation rate and mean length",
                  _length_truncation(rows), "Training rollouts; length in the model's tokens.")
    page.add("time_per_phase.png", "Time per phase per step", "seconds", _phases(rows),
             "rollout excludes the critic's judging (its own bar).")
    page.add("logp_gap.png", "Log-prob gap, engine vs trainer", "mean |logp difference|",
             _line(rows, "logp_gap"), "Near 0: the engine samples from the weights trained.")
    page.add("sync_seconds.png", "Weight sync into the engine", "seconds",
             _line(rows, "sync_seconds"))
    path = page.out / "report.md"
    path.write_text(markdown(run, rows, page.figures, page.missing))
    return path


def markdown(run: Path, rows: list[dict], figures: list[Figure], missing: list[str]) -> str:
    lines = [f"# Run {run.resolve().name}", ""]
    config = run / "config.yaml"
    if config.exists():
        import yaml

        cfg = yaml.safe_load(config.read_text()) or {}
        tasks = ", ".join(f"{t['id']} ({t.get('weight', 1)})" for t in cfg.get("tasks", []))
        steps = (cfg.get("train") or {}).get("steps")
        model = (cfg.get("model") or {}).get("path") or "the embedded default model"
        lines += [f"Folder `{run.resolve()}`; {steps} steps of {tasks}; starting from {model}.",
                  ""]
    last = rows[-1]["step"] if rows else None
    status = run / "state.json"
    if status.exists():
        state = RunState.from_dict(json.loads(status.read_text()))
        done = "finished" if (run / "summary.json").exists() else state.status
        lines += [f"Status: {done}, last checkpoint at step {state.last_step}; "
                  f"metrics logged up to step {last}.", ""]
    table = heldout_table(rows)
    if table:
        lines += ["## Held-out accuracy (greedy, n distinct problems)", "",
                  "| task | before | after | n |", "|---|---:|---:|---:|"]
        for task, before, after, n in table:
            fmt = lambda x: "-" if x is None else f"{x:.3f}"  # noqa: E731
            lines.append(f"| {task} | {fmt(before)} | {fmt(after)} | "
                         f"{'-' if n is None else f'{n:.0f}'} |")
        lines.append("")
    for f in figures:
        lines += [f"## {f.title}", "", f"![{f.title}]({f.name})", ""]
        if f.note:
            lines += [f.note, ""]
    if missing:
        lines += ["## Not in this run's metrics", "", *[f"- {m}" for m in missing], ""]
    return "\n".join(lines)
