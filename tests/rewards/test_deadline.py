"""The hard time limit (rewards.deadline): a call that holds the GIL is killed on time."""

from __future__ import annotations

import doctest
import threading
import time

import pytest

import rewards.deadline
from rewards.deadline import TIMEOUTS, Timed, WorkerError, Worker, timeouts, within


def test_doctests_pass() -> None:
    assert doctest.testmod(rewards.deadline).failed == 0


def test_a_call_returns_its_value_and_no_flag() -> None:
    assert within(divmod, 7, 2, seconds=30.0) == Timed((3, 1), False)


def test_a_gil_bomb_is_killed_at_the_limit_and_the_callers_threads_keep_running() -> None:
    """pow(9, 9**9) is one C call that holds the GIL for minutes: a thread cannot be
    stopped, and would stop every other thread of the process; the worker process is killed."""
    worker = Worker()
    worker.call(pow, 2, 2, seconds=60.0)  # started: the start is not what is measured
    before, total = TIMEOUTS["pow"], timeouts()
    result, ticks = [], 0
    thread = threading.Thread(
        target=lambda: result.append(worker.call(pow, 9, 9**9, seconds=0.5, default=0.0)))
    start = time.monotonic()
    thread.start()
    while thread.is_alive():
        ticks += 1
        time.sleep(0.01)
    elapsed = time.monotonic() - start
    assert result == [Timed(0.0, True)]
    assert elapsed < 10.0  # 0.5 s and a kill; the bomb alone runs for minutes
    assert ticks >= 1  # this thread ran meanwhile (a thread running the bomb would stop it)
    assert TIMEOUTS["pow"] == before + 1 and timeouts() == total + 1
    assert worker.call(pow, 2, 10, seconds=60.0) == Timed(1024, False)  # a fresh worker
    worker.close()


def test_an_error_in_the_worker_is_raised_here() -> None:
    with pytest.raises(WorkerError, match="ValueError"):
        within(int, "not a number", seconds=30.0)
