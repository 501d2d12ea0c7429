"""Tests for k2rl.store against a real redis-server (nothing is mocked or skipped)."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from k2rl.group import Group, Request, Status, Trajectory
from k2rl.store import (MissingServiceError, RedisServer, RunStore, StaleRunError, connect,
                        start_redis)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    with start_redis(tmp_path) as srv:
        yield srv


@pytest.fixture
def store(server: RedisServer) -> RunStore:
    return RunStore(connect(server.url), "run1")


def traj(traj_id: str, reward: float = 1.0) -> Group:
    """A group of one trajectory, `traj_id`, with the task reward `reward`."""
    t = Trajectory(traj_id, "k2rl/Arithmetic-v1", "arithmetic", f"p-{traj_id}", 0, ids=[1, 2, 3],
                   mask=[0, 1, 1], messages=[{"role": "user", "content": f"p-{traj_id}"}],
                   rewards={"task": reward}, status=Status.DONE)
    return Group(Request("k2rl/Arithmetic-v1", seed=len(traj_id)), 0, [t])


def test_a_group_round_trips_through_its_dict() -> None:
    g = traj("a", 0.5)
    g.trajectories[0].rewards["length"] = -0.25
    d = g.to_dict()
    assert d["trajectories"][0]["status"] == "done" and d["trajectories"][0]["reward"] == 0.25
    assert Group.from_dict(d) == g and Group.from_dict(d).trajectories[0].status is Status.DONE


def fill(store: RunStore) -> None:
    """Write one of everything, for the persistence tests."""
    store.add_rollouts(0, [traj("a"), traj("b")])
    store.add_rollouts(1, [traj("c", 0.0)])
    store.add_metrics(0, {"loss": 0.5})
    store.set_state(last_step=1, checkpoint="ckpt/1", status="running")
    store.add_pairs("train", [{"chosen": "x", "rejected": "y"}])
    store.add_pairs("heldout", [{"chosen": "u", "rejected": "v"}])
    store.record_outcomes(["q1", "q1"], [1.0, 0.0])


def check_filled(store: RunStore) -> None:
    assert store.rollouts() == [traj("a"), traj("b"), traj("c", 0.0)]
    assert store.rollout_count() == 3
    assert store.metrics() == [{"step": 0, "loss": 0.5}]
    assert store.state() == {"last_step": 1, "checkpoint": "ckpt/1", "status": "running"}
    assert store.pairs("train") == [{"chosen": "x", "rejected": "y"}]
    assert store.pairs("heldout") == [{"chosen": "u", "rejected": "v"}]
    assert store.success_rate("q1") == 0.5
    # Idempotence must survive the restart too.
    assert store.add_rollouts(0, [traj("z")]) == 0


# --------------------------------------------------------------------------- round trips


def test_rollouts_round_trip(store: RunStore) -> None:
    assert store.add_rollouts(0, [traj("a"), traj("b", 0.0)]) == 2
    assert store.add_rollouts(1, [traj("c")]) == 1
    assert store.rollouts() == [traj("a"), traj("b", 0.0), traj("c")]
    assert store.rollouts(0) == [traj("a"), traj("b", 0.0)]
    assert store.rollouts(1) == [traj("c")]
    assert store.rollouts(7) == []
    assert store.rollout_count() == 3


def test_rollouts_are_read_across_pages(store: RunStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("k2rl.store._READ_PAGE", 2)
    store.add_rollouts(0, [traj(str(i)) for i in range(5)])
    assert [g.trajectories[0].traj_id for g in store.rollouts()] == ["0", "1", "2", "3", "4"]


def test_add_rollouts_same_step_twice_writes_once(store: RunStore) -> None:
    assert store.add_rollouts(3, [traj("a"), traj("b")]) == 2
    assert store.add_rollouts(3, [traj("a"), traj("b")]) == 0
    assert store.add_rollouts(3, [traj("other")]) == 0
    assert store.rollouts(3) == [traj("a"), traj("b")]
    assert store.rollout_count() == 2


def test_carried_groups_are_replaced_with_the_step(store: RunStore) -> None:
    paused = traj("p")
    paused.trajectories[0].status, paused.trajectories[0].rewards = Status.PAUSED, {}
    assert store.carry() == []
    store.add_rollouts(1, [traj("a")], carry=[paused])
    assert store.carry() == [paused] and store.carry()[0].paused
    store.add_rollouts(2, [traj("b")], carry=[])
    assert store.carry() == [] and store.rollout_count() == 2


def test_rollouts_of_an_earlier_layout_are_one_clear_error(store: RunStore) -> None:
    """Before groups were typed, each stream entry held one trajectory dict."""
    store.client.xadd(store.key("rollouts"), {"step": 1, "traj_id": "1:0:0",
                                              "data": '{"traj_id": "1:0:0", "reward": 1.0}'})
    with pytest.raises(StaleRunError, match="run run1 stored its rollouts in the layout of an "
                                            "earlier k2rl"):
        store.rollouts(1)


def test_add_rollouts_of_a_non_group_writes_nothing(store: RunStore) -> None:
    with pytest.raises(ValueError, match="must be Groups"):
        store.add_rollouts(0, [traj("a"), {"reward": 1.0}])
    assert store.rollout_count() == 0
    # The step was not marked as written, so a corrected retry goes through.
    assert store.add_rollouts(0, [traj("a")]) == 1


def test_metrics_round_trip(store: RunStore) -> None:
    store.add_metrics(0, {"loss": 1.5, "reward": 0.25})
    store.add_metrics(1, {"loss": 1.0})
    assert store.metrics() == [
        {"step": 0, "loss": 1.5, "reward": 0.25},
        {"step": 1, "loss": 1.0},
    ]
    with pytest.raises(ValueError):
        store.add_metrics(2, {"step": 5})


def test_state_round_trip_keeps_types(store: RunStore) -> None:
    assert store.state() == {}
    store.set_state(last_step=4, checkpoint="runs/x/ckpt-4", status="running")
    store.set_state(status="done", best={"reward": 0.75})
    store.set_state()  # no fields: no-op, not an error
    state = store.state()
    assert state == {
        "last_step": 4,
        "checkpoint": "runs/x/ckpt-4",
        "status": "done",
        "best": {"reward": 0.75},
    }
    assert isinstance(state["last_step"], int)


def test_pairs_round_trip(store: RunStore) -> None:
    store.add_pairs("train", [{"chosen": "a", "rejected": "b"}, {"chosen": "c", "rejected": "d"}])
    store.add_pairs("train", [])
    store.add_pairs("heldout", [{"chosen": "e", "rejected": "f"}])
    assert store.pairs("train") == [
        {"chosen": "a", "rejected": "b"},
        {"chosen": "c", "rejected": "d"},
    ]
    assert store.pairs("heldout") == [{"chosen": "e", "rejected": "f"}]
    with pytest.raises(ValueError):
        store.add_pairs("test", [{"chosen": "a"}])
    with pytest.raises(ValueError):
        store.pairs("validation")


def test_success_rates(store: RunStore) -> None:
    assert store.success_rate("q1") is None
    store.record_outcomes(["q1", "q2", "q1"], [1.0, 0.0, 0.0])
    store.record_outcomes(["q1", "q:odd"], [0.5, 1.0])
    store.record_outcomes([], [])
    assert store.success_rate("q1") == pytest.approx(1.5 / 3)
    assert store.success_rate("q2") == 0.0
    assert store.success_rate("q:odd") == 1.0
    with pytest.raises(ValueError):
        store.record_outcomes(["q1"], [1.0, 0.0])


def test_runs_do_not_share_keys(server: RedisServer) -> None:
    client = connect(server.url)
    one, two = RunStore(client, "one"), RunStore(client, "two")
    one.add_rollouts(0, [traj("a")])
    one.set_state(status="running")
    assert two.rollouts() == [] and two.state() == {}
    assert two.add_rollouts(0, [traj("b")]) == 1
    assert all(key.startswith(("k2rl:one:", "k2rl:two:")) for key in client.keys("*"))


def test_run_store_rejects_bytes_client(server: RedisServer) -> None:
    with pytest.raises(ValueError, match="decode_responses"):
        RunStore(redis.Redis.from_url(server.url), "run1")


# --------------------------------------------------------------------------- persistence


def test_persists_across_restart(tmp_path: Path) -> None:
    with start_redis(tmp_path) as first:
        fill(RunStore(connect(first.url), "run1"))
    with start_redis(tmp_path) as second:
        check_filled(RunStore(connect(second.url), "run1"))


def test_rollout_step_is_one_transaction_in_aof(tmp_path: Path) -> None:
    with start_redis(tmp_path) as srv:
        RunStore(connect(srv.url), "run1").add_rollouts(0, [traj("a"), traj("b")])
    aof = b"".join(p.read_bytes() for p in (tmp_path / "redis").rglob("*.incr.aof"))
    # MULTI, both XADDs, and the step marker, then EXEC: replayed all or nothing.
    multi = aof.index(b"MULTI")
    assert aof.count(b"XADD") == 2
    assert multi < aof.index(b"XADD") < aof.index(b"HSET") < aof.index(b"EXEC")


def test_survives_sigkill(tmp_path: Path) -> None:
    srv = start_redis(tmp_path)
    client = connect(srv.url)
    fill(RunStore(client, "run1"))
    # everysec may hold writes in the AOF buffer for a moment; once it is empty
    # the data is in the file and a killed process loses nothing.
    deadline = time.monotonic() + 5
    while client.info("persistence")["aof_buffer_length"] and time.monotonic() < deadline:
        time.sleep(0.01)
    srv.process.send_signal(signal.SIGKILL)
    srv.process.wait(timeout=5)
    srv.stop()
    with start_redis(tmp_path) as again:
        check_filled(RunStore(connect(again.url), "run1"))


# --------------------------------------------------------------------------- failures and lifecycle


def test_connect_to_closed_port_raises(server: RedisServer) -> None:
    url = server.url
    server.stop()
    with pytest.raises(MissingServiceError, match=f"cannot reach Redis at {url}"):
        connect(url)


def test_start_redis_without_binary_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(MissingServiceError, match="redis-server is not installed"):
        start_redis(tmp_path / "run")


def test_start_redis_early_exit_names_log(tmp_path: Path) -> None:
    # A corrupt AOF manifest makes redis-server refuse to start.
    aof_dir = tmp_path / "redis" / "appendonlydir"
    aof_dir.mkdir(parents=True)
    (aof_dir / "appendonly.aof.manifest").write_text("this is not a manifest\n")
    with pytest.raises(MissingServiceError, match="exited early") as info:
        start_redis(tmp_path)
    assert str(tmp_path / "redis" / "redis.log") in str(info.value)


def test_stopped_server_leaves_no_process(tmp_path: Path) -> None:
    with start_redis(tmp_path) as srv:
        assert srv.url == f"redis://127.0.0.1:{srv.port}/0"
        assert srv.process.poll() is None
        assert connect(srv.url).ping()
    assert srv.process.poll() is not None
    srv.stop()  # a second stop is a no-op
    with pytest.raises(MissingServiceError):
        connect(srv.url)


def test_a_server_left_serving_the_run_is_stopped_before_another_starts(tmp_path, capsys):
    """A second start on the same folder (a resume after the driver was killed) first stops
    the server its pid file names, so two servers never share one append-only file; what the
    first acknowledged is on disk (appendfsync always) and the second serves it."""
    first = start_redis(tmp_path)
    connect(first.url).set("k", "v")
    second = start_redis(tmp_path)
    try:
        assert first.process.wait(timeout=10) is not None
        assert "stopped redis-server pid" in capsys.readouterr().err
        assert connect(second.url).get("k") == "v"
    finally:
        second.stop()
        first.stop()
    assert not (tmp_path / "redis" / "redis.pid").exists()
