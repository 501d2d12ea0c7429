"""`k2rl` with a fault injected once step N's rollouts are stored, for the resume tests.

    python -m tests.k2rl.faults crash N ARGS...         the driver fails at step N
    python -m tests.k2rl.faults kill-worker N ARGS...   the last hybrid worker is killed at step N
    python -m tests.k2rl.faults sigkill N ARGS...       the driver is SIGKILLed at step N, after
                                                        writing its descendants (pid, start
                                                        time) to $K2RL_FAULT_PIDS
    python -m tests.k2rl.faults kill-redis N ARGS...    the run's redis-server is SIGKILLed at N

ARGS are those of `k2rl`. The fault is installed through the controller's `on_stored` callback,
so production code carries no fault switch.
"""
import sys

from k2rl import cli, controller


def crash_at(n: int):
    def on_stored(step, workers):
        if step == n:
            raise controller.RunError(f"injected failure at step {step}")
    return on_stored


def kill_worker_at(n: int):
    def on_stored(step, workers):
        if step == n:
            import ray

            ray.kill(workers.actors[-1], no_restart=True)
    return on_stored


def sigkill_at(n: int):
    def on_stored(step, workers):
        if step == n:
            import json
            import os
            import signal

            from k2rl.runtime.reaper import descendants, start_time

            procs = {pid: start_time(pid) for pid in descendants(os.getpid())}
            with open(os.environ["K2RL_FAULT_PIDS"], "w") as f:
                json.dump(procs, f)
            os.kill(os.getpid(), signal.SIGKILL)
    return on_stored


def kill_redis_at(n: int):
    def on_stored(step, workers):
        if step == n:
            import os
            import signal
            from pathlib import Path

            from k2rl.runtime.reaper import descendants

            for pid in descendants(os.getpid()):
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                if cmdline.startswith(b"redis-server") or b"/redis-server" in cmdline:
                    os.kill(pid, signal.SIGKILL)
    return on_stored


def main() -> int:
    fault, n, *argv = sys.argv[1:]
    hook = {"crash": crash_at, "kill-worker": kill_worker_at, "sigkill": sigkill_at,
            "kill-redis": kill_redis_at}[fault](int(n))
    train = controller.train
    controller.train = lambda cfg, run_dir, resume=False: train(cfg, run_dir, resume, hook)
    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main())
