"""Tests for k2rl.runtime.store against a real redis-server (nothing is mocked or skipped)."""

from __future__ import annotations

import gzip
import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from critic.pairs import Pair
from k2rl.runtime.redis_server import MissingServiceError, RedisServer, connect, start_redis
from k2rl.runtime.store import RunState, RunStore, StaleRunError, write_lines
from k2rl.step.group import Group, Request, Status, Trajectory


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
    store.add_pairs("train", [Pair("q", "x", "y", "arithmetic")])
    store.add_pairs("heldout", [Pair("r", "u", "v")])
    store.record_outcomes(["q1", "q1"], [1.0, 0.0])


def check_filled(store: RunStore) -> None:
    assert store.rollouts() == [traj("a"), traj("b"), traj("c", 0.0)]
    assert store.rollout_count() == 3
    assert store.metrics() == [{"step": 0, "loss": 0.5}]
    assert store.state() == RunState(status="running", last_step=1, checkpoint="ckpt/1")
    assert store.pairs("train") == [Pair("q", "x", "y", "arithmetic")]
    assert store.pairs("heldout") == [Pair("r", "u", "v")]
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


def test_rollouts_of_the_one_stream_layout_are_still_read(store: RunStore,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs written before per-step keys kept every group in one `rollouts` stream: they are
    read (across pages) and resumed, new steps going to per-step keys."""
    monkeypatch.setattr("k2rl.runtime.store._READ_PAGE", 2)
    for step, name in [(0, "0"), (0, "1"), (1, "2"), (1, "3"), (1, "4")]:
        store.client.xadd(store.key("rollouts"), {"step": step, "group_id": f"{step}:0",
                                                  "data": json.dumps(traj(name).to_dict())})
    store.client.hset(store.key("rollout_steps"), mapping={"0": 2, "1": 3})
    assert store.add_rollouts(1, [traj("x")]) == 0 and store.add_rollouts(2, [traj("5")]) == 1
    assert [g.trajectories[0].traj_id for g in store.rollouts()] == ["0", "1", "2", "3", "4", "5"]
    assert [g.trajectories[0].traj_id for g in store.rollouts(1)] == ["2", "3", "4"]


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


# --------------------------------------------------------------------------- steps in files


@pytest.fixture
def kept(server: RedisServer, tmp_path: Path) -> RunStore:
    """A store that keeps the newest 3 steps in Redis and moves older ones to tmp_path."""
    return RunStore(connect(server.url), "run1", tmp_path / "run1", keep_steps=3)


def in_redis(store: RunStore, kind: str = "rollouts") -> list[int]:
    return sorted(int(k.rsplit(":", 1)[1]) for k in store.client.keys(store.key(f"{kind}:*")))


def test_steps_older_than_keep_steps_move_to_files(kept: RunStore) -> None:
    for step in range(1, 9):
        kept.add_rollouts(step, [traj(f"{step}a"), traj(f"{step}b", 0.0)])
    assert in_redis(kept) == [6, 7, 8]  # the newest 3 only
    files = sorted(p.name for p in (kept.folder / "rollouts").iterdir())
    assert files == [f"step-{s:05d}.jsonl.gz" for s in range(1, 6)]
    lines = gzip.open(kept.folder / "rollouts" / "step-00002.jsonl.gz", "rt").read().splitlines()
    assert [Group.from_dict(json.loads(x)) for x in lines] == [traj("2a"), traj("2b", 0.0)]
    # a moved step and a held one read the same; all steps in order; counts and markers stay
    assert kept.rollouts(2) == [traj("2a"), traj("2b", 0.0)] and kept.rollouts(7)[0] == traj("7a")
    assert [g.trajectories[0].traj_id for g in kept.rollouts()][::2] == [
        f"{s}a" for s in range(1, 9)]
    assert kept.rollout_count() == 16 and kept.has_rollouts(1) and kept.steps() == [*range(1, 9)]
    assert kept.add_rollouts(2, [traj("again")]) == 0 and kept.rollouts(2)[0] == traj("2a")


def test_reading_one_step_reads_only_that_step(kept: RunStore) -> None:
    """Every other step, held or moved, is unreadable here, and reading step 5 does not care."""
    for step in range(1, 7):
        kept.add_rollouts(step, [traj(f"{step}")])
    for step in (4, 6):
        kept.client.lset(kept.key(f"rollouts:{step}"), 0, "not json")
    for step in (1, 2, 3):
        (kept.folder / "rollouts" / f"step-{step:05d}.jsonl.gz").write_bytes(b"not gzip")
    assert kept.rollouts(5) == [traj("5")]


def test_a_step_is_readable_at_every_point_of_its_move(kept: RunStore) -> None:
    """Moved: file first (temporary name, renamed), key deleted after. A crash before the rename
    leaves a .tmp that nothing reads; after it, both copies, and the next move ends it."""
    for step in range(1, 4):
        kept.add_rollouts(step, [traj(f"{step}")])
    path = kept.step_file("rollouts", 1)
    path.parent.mkdir(parents=True)
    path.with_name(path.name + ".tmp").write_bytes(b"cut short")  # killed mid-write
    assert kept.rollouts(1) == [traj("1")]
    write_lines(path, kept.client.lrange(kept.key("rollouts:1"), 0, -1))  # killed before DEL
    assert kept.rollouts(1) == [traj("1")] and in_redis(kept) == [1, 2, 3]
    kept.add_rollouts(4, [traj("4")])  # the next step finishes the move
    assert in_redis(kept) == [2, 3, 4] and kept.rollouts(1) == [traj("1")]
    assert [g.trajectories[0].traj_id for g in kept.rollouts()] == ["1", "2", "3", "4"]


def test_a_step_without_groups_has_no_key_and_no_file(kept: RunStore) -> None:
    """Partial rollouts: a step may finish no whole group."""
    assert kept.add_rollouts(1, [], carry=[]) == 0 and kept.has_rollouts(1)
    for step in range(2, 6):
        kept.add_rollouts(step, [traj(f"{step}")])
    assert kept.rollouts(1) == [] and not kept.step_file("rollouts", 1).exists()


def test_redis_memory_stays_flat_when_steps_move_to_files(kept: RunStore) -> None:
    def used() -> int:
        return sum(kept.client.memory_usage(k) or 0 for k in kept.client.keys(kept.key("*")))

    big = [traj("x" * 2000 + str(i)) for i in range(8)]  # about 8 x 4 KB a step
    for step in range(1, 11):
        kept.add_rollouts(step, big)
    at_10 = used()
    for step in range(11, 61):
        kept.add_rollouts(step, big)
    # the step index grows by a few bytes a step; the trajectories (32 KB a step) do not
    assert used() - at_10 < 50 * 100, (at_10, used())


def test_the_resumed_store_reads_moved_steps_after_a_restart(tmp_path: Path) -> None:
    run = tmp_path / "run1"
    with start_redis(run) as first:
        store = RunStore(connect(first.url), "run1", run, keep_steps=2)
        for step in range(1, 6):
            store.add_rollouts(step, [traj(f"{step}")])
        store.add_heldout(0, [traj("h0")])
    with start_redis(run) as second:
        again = RunStore(connect(second.url), "run1", run, keep_steps=2)
        assert [g.trajectories[0].traj_id for g in again.rollouts()] == ["1", "2", "3", "4", "5"]
        assert again.add_rollouts(3, [traj("x")]) == 0  # a replayed step is not written twice
        assert again.heldout(0) == [traj("h0")]
        reader = RunStore(connect(second.url), "run1", run)  # k2rl rollouts: reads, moves none
        assert reader.rollouts(1) == [traj("1")] and reader.archive(100) == 0


def test_heldout_answers_round_trip_and_move_like_rollouts(kept: RunStore) -> None:
    assert kept.heldout(0) == [] and kept.steps("heldout") == []
    assert kept.add_heldout(0, [traj("h0a"), traj("h0b", 0.0)]) == 2
    assert kept.add_heldout(0, [traj("later")]) == 0  # the first evaluation of a step stays
    for step in range(1, 7):
        kept.add_rollouts(step, [traj(f"{step}")])
        if step % 2 == 0:
            kept.add_heldout(step, [traj(f"h{step}")])
    assert kept.steps("heldout") == [0, 2, 4, 6] and in_redis(kept, "heldout") == [4, 6]
    assert kept.step_file("heldout", 2).exists() and kept.heldout(2) == [traj("h2")]
    assert kept.heldout(0) == [traj("h0a"), traj("h0b", 0.0)]
    assert kept.rollouts() == [traj(f"{s}") for s in range(1, 7)]  # evaluations apart


def test_keep_steps_needs_a_folder(server: RedisServer, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="keep_steps needs a run folder"):
        RunStore(connect(server.url), "run1", keep_steps=3)
    with pytest.raises(ValueError, match="must be >= 1"):
        RunStore(connect(server.url), "run1", tmp_path, keep_steps=0)


def test_used_mb_is_the_servers_count(store: RunStore) -> None:
    before = store.used_mb()
    store.add_rollouts(0, [traj("x" * 100_000)])
    assert 0.1 < store.used_mb() - before < 1.0


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
    assert store.state() == RunState()  # nothing stored yet: the defaults
    pool = [Request("k2rl/Arithmetic-v2", seed=3, budget=64), Request("k2rl/Chat-v1", seed=4)]
    store.set_state(last_step=4, checkpoint="runs/x/ckpt-4", status="running",
                    worker_nodes=["n1", "n1"], heldout_before={"heldout/all/accuracy": 0.5},
                    critic_heldout=0, pool=pool)
    store.set_state(status="finished", heldout_after={"heldout/all/accuracy": 0.75})
    store.set_state()  # no fields: no-op, not an error
    state = store.state()
    assert state == RunState(status="finished", last_step=4, checkpoint="runs/x/ckpt-4",
                             worker_nodes=["n1", "n1"],
                             heldout_before={"heldout/all/accuracy": 0.5},
                             heldout_after={"heldout/all/accuracy": 0.75},
                             critic_heldout=0, pool=pool)
    assert isinstance(state.last_step, int) and isinstance(state.pool[0], Request)
    assert RunState.from_dict(json.loads(json.dumps(state.to_dict()))) == state  # state.json
    with pytest.raises(TypeError):
        store.set_state(last_stpe=5)  # a misspelt field is an error, not a new key
    assert store.client.hget(store.key("state"), "last_stpe") is None


def test_a_state_written_before_or_after_this_k2rl_still_reads(store: RunStore) -> None:
    """The on-Redis format is a hash of JSON values: a run written by an earlier k2rl (no
    worker_nodes, no pool, no status yet) still resumes with the defaults, and a field this k2rl
    does not know (a later one's) is left out, not an error."""
    store.client.hset(store.key("state"), mapping={
        "last_step": "2", "checkpoint": json.dumps("runs/old/checkpoints/step-00002"),
        "heldout_before": json.dumps({"heldout/all/accuracy": 0.25}),
        "pool": json.dumps([{"env_id": "k2rl/Arithmetic-v2", "seed": 7, "budget": None,
                             "split": "train", "group": 0, "temperature": 1.0, "k": 1}]),
        "best": json.dumps({"reward": 0.75})})
    state = store.state()
    assert state == RunState(last_step=2, checkpoint="runs/old/checkpoints/step-00002",
                             heldout_before={"heldout/all/accuracy": 0.25},
                             pool=[Request("k2rl/Arithmetic-v2", seed=7)])
    assert state.status == "starting" and state.worker_nodes == [] and state.critic_heldout is None
    store.set_state(last_step=3)  # a resumed run writes only what it changes
    assert store.state().last_step == 3
    assert json.loads(store.client.hget(store.key("state"), "best")) == {"reward": 0.75}


def test_pairs_round_trip(store: RunStore) -> None:
    train = [Pair("1+1=", "2", "3", "arithmetic"), Pair("hi", "hello", "buy now", "chat", "tone")]
    store.add_pairs("train", train)
    store.add_pairs("train", [])
    store.add_pairs("heldout", [Pair("p", "e", "f")])
    assert store.pairs("train") == train
    assert all(type(p) is Pair for p in store.pairs("train"))
    assert store.pairs("heldout") == [Pair("p", "e", "f")]  # no task, no rubric: None back
    # On Redis a pair is its to_json() dict, as before pairs were typed.
    raw = store.client.lrange(store.key("pairs:train"), 0, -1)
    assert [json.loads(x) for x in raw] == [p.to_json() for p in train]
    with pytest.raises(ValueError):
        store.add_pairs("test", [Pair("p", "a", "b")])
    with pytest.raises(ValueError):
        store.pairs("validation")


def test_pairs_stored_before_they_were_typed_still_load(store: RunStore) -> None:
    """A run stored pairs as plain dicts (Pair.to_json(); optional keys left out when None);
    they read back as Pairs, and a key Pair lacks is dropped rather than failing the run."""
    old = [{"prompt": "12*13=", "chosen": "156", "rejected": "150", "task": "arithmetic"},
           {"prompt": "q", "chosen": "a", "rejected": "b"},
           {"prompt": "q2", "chosen": "c", "rejected": "d", "rubric": "tone", "step": 7}]
    store.client.rpush(store.key("pairs:heldout"), *(json.dumps(row) for row in old))
    assert store.pairs("heldout") == [Pair("12*13=", "156", "150", "arithmetic"),
                                      Pair("q", "a", "b"), Pair("q2", "c", "d", rubric="tone")]
    store.client.rpush(store.key("pairs:train"), json.dumps({"chosen": "a", "rejected": "b"}))
    with pytest.raises(ValueError, match="prompt"):
        store.pairs("train")


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
    assert two.rollouts() == [] and two.state() == RunState()
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
    # MULTI, the step's groups, and the step marker, then EXEC: replayed all or nothing.
    multi = aof.index(b"MULTI")
    assert aof.count(b"RPUSH") == 1 and aof.count(b"p-a") == aof.count(b"p-b") == 2
    assert multi < aof.index(b"RPUSH") < aof.index(b"HSET") < aof.index(b"EXEC")


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
