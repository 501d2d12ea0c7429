"""`k2rl` with a fault injected once step N's rollouts are stored, for the resume tests.

    python -m tests.k2rl.faults crash N ARGS...         the driver fails at step N
    python -m tests.k2rl.faults kill-worker N ARGS...   the last hybrid worker is killed at step N

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


def main() -> int:
    fault, n, *argv = sys.argv[1:]
    hook = {"crash": crash_at, "kill-worker": kill_worker_at}[fault](int(n))
    train = controller.train
    controller.train = lambda cfg, run_dir, resume=False: train(cfg, run_dir, resume, hook)
    return cli.main(argv)


if __name__ == "__main__":
    sys.exit(main())
