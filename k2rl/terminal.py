"""A quiet terminal: the progress bar and k2rl's own lines, nothing else.

`quiet_terminal` sends the driver's library warnings and logging to RUN_DIR/driver.log, and
`ray_logging` the Ray workers' stdout and stderr (vLLM, transformers, torch) to
RUN_DIR/workers.log; `log.verbose` (`k2rl train -v`) leaves both on the terminal.
"""
from __future__ import annotations

import logging
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from k2rl.config import Config

DRIVER_LOG = "driver.log"
WORKERS_LOG = "workers.log"


def _redirect_output(path: str) -> None:
    """In a Ray worker process: its stdout and stderr (file descriptors 1 and 2, so also what
    C++ and subprocesses print) appended to `path`."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError:
        return  # a node without the run folder: Ray's own worker logs keep it
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    print(f"==== Ray worker process {os.getpid()} on {os.uname().nodename}", flush=True)


def ray_logging(cfg: Config, run_dir: Path) -> dict:
    """ray.init arguments: workers' output to the terminal (verbose) or to RUN_DIR/workers.log."""
    if cfg.log.verbose:
        return {"log_to_driver": True}
    path = str(Path(run_dir).resolve() / WORKERS_LOG)

    def k2rl_worker_output():  # a closure: Ray ships it to each worker process of this job
        _redirect_output(path)

    return {"log_to_driver": False, "runtime_env": {"worker_process_setup_hook": k2rl_worker_output}}


@contextmanager
def quiet_terminal(run_dir: Path, verbose: bool = False, name: str = DRIVER_LOG):
    """The driver's library warnings and logging into RUN_DIR/driver.log (or `name`; nothing
    changes when verbose); k2rl's own prints, the progress bar and errors stay on the
    terminal."""
    if verbose:
        yield
        return
    handler = _LazyFileHandler(run_dir / name, delay=True)  # no folder for a bad config
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.captureWarnings(True)
    hf = _library_handlers()
    try:
        yield
    finally:
        _library_handlers(hf)
        logging.captureWarnings(False)
        root.removeHandler(handler)
        root.setLevel(level)
        handler.close()


class _LazyFileHandler(logging.FileHandler):
    """A file handler that makes the file's folder at the first record."""

    def _open(self):
        Path(self.baseFilename).parent.mkdir(parents=True, exist_ok=True)
        return super()._open()


def _library_handlers(saved: list | None = None) -> list:
    """Loggers that print to the terminal by handlers of their own (transformers, vLLM, ...):
    their stream handlers taken off and propagation on, so their records reach the root's file
    handler; given what this returned, put back."""
    if saved is not None:
        for logger, handlers, propagate in saved:
            if logger == "transformers":
                from transformers.utils import logging as hf_logging

                hf_logging.enable_default_handler()
                hf_logging.disable_propagation()
                if handlers:  # its progress bars were on
                    hf_logging.enable_progress_bar()
                continue
            logger.handlers[:] = handlers
            logger.propagate = propagate
        return saved
    out = []
    if "transformers" in sys.modules or _importable("transformers"):
        from transformers.utils import logging as hf_logging

        hf_logging.disable_default_handler()  # sets it up first, so it is not added later
        hf_logging.enable_propagation()
        out.append(("transformers", hf_logging.is_progress_bar_enabled(), None))
        hf_logging.disable_progress_bar()  # "Writing model shards" and the like
    if _importable("ray"):
        import ray  # noqa: F401  (its logger gets a terminal handler at import: move it now)
    for name in ("vllm", "ray", "datasets", "torch", "urllib3"):
        logger = logging.getLogger(name)
        streams = [h for h in logger.handlers if isinstance(h, logging.StreamHandler)
                   and not isinstance(h, logging.FileHandler)]
        if streams or not logger.propagate:
            out.append((logger, list(logger.handlers), logger.propagate))
            logger.handlers[:] = [h for h in logger.handlers if h not in streams]
            logger.propagate = True
    return out


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None
