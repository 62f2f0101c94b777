"""The background embedding worker: alone, light, gone with its store, absent without the extra."""

import os
import shutil
import subprocess
import sys
import time

import omcm_post_tool_observer
import pytest
from omcm_post_tool_observer import embedder, storage, worker

from omcm_core.files import file_lock
from omcm_core.store import Store
from omcm_core.testing import post_tool_payload, run_hook

needs_model = pytest.mark.skipif(not embedder.available(), reason="needs the [embeddings] extra")
ON = {
    "OMCM_LOAD_PLUGINS": "post-tool-observer",
    "OMCM__POST_TOOL_OBSERVER__EMBEDDINGS": "true",
    "OMCM__POST_TOOL_OBSERVER__WORKER_INTERVAL_S": "1e9",
}


def record(dispatch, count, home=None):
    if home is not None:  # a worker "just started": the hook must not start one behind the test's back
        store = Store(home)
        storage.ready(store)
        storage.set_meta(store, "worker_started", time.time())
    for i in range(count):
        dispatch(
            post_tool_payload(
                "Bash",
                {"command": f"pytest -q tests/test_{i}.py"},
                {"stdout": f"test_{i}.py ..F\nAssertionError: widget {i} is broken\n", "stderr": ""},
            )
        )


def start_worker(home, *args):
    env = {**os.environ, **ON, "OMCM_HOME": str(home)}
    return subprocess.Popen(
        [sys.executable, "-m", "omcm_core", "observer-worker", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_lock(home, proc):
    lock_dir = home / "plugins" / "post-tool-observer"
    while not (lock_dir.exists() and worker.running(lock_dir)):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)


def queued(home):
    return Store(home).query("SELECT count(*) FROM observer_outbox")[0][0]


@needs_model
def test_worker_embeds_every_job_and_empties_the_outbox(omcm_dispatch, omcm_home):
    dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=ON)
    record(dispatch, 5, omcm_home)
    assert queued(omcm_home) == 5
    proc = start_worker(omcm_home, "--idle", "0")
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert "embedded 5 observations" in out
    assert queued(omcm_home) == 0
    assert Store(omcm_home).query("SELECT count(*), min(dim) FROM observer_vectors")[0] == (5, 384)


@needs_model
@pytest.mark.parametrize("jobs", [0, 40])
def test_worker_exits_when_its_store_is_deleted_and_recreates_nothing(omcm_dispatch, omcm_home, jobs):
    dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=ON)
    record(dispatch, jobs, omcm_home)
    storage.ready(Store(omcm_home))
    proc = start_worker(omcm_home, "--idle", "3600")
    wait_for_lock(omcm_home, proc)
    shutil.rmtree(omcm_home)
    proc.communicate(timeout=600)  # a hang guard: it must exit long before its hour of idling
    assert proc.returncode == 0
    assert not omcm_home.exists()


def test_worker_without_a_store_does_not_create_one(omcm_home):
    proc = start_worker(omcm_home, "--idle", "0")
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "nothing to do" in out
    assert not omcm_home.exists()


@needs_model
def test_a_second_worker_leaves_at_once_and_the_hook_starts_none(omcm_dispatch, omcm_home):
    dispatch = omcm_dispatch(
        names={"post-tool-observer": omcm_post_tool_observer},
        env={**ON, "OMCM__POST_TOOL_OBSERVER__WORKER_INTERVAL_S": "0"},
    )
    lock_dir = omcm_home / "plugins" / "post-tool-observer"
    lock_dir.mkdir(parents=True)
    with file_lock(lock_dir / worker.LOCK_NAME, timeout=0):  # the running worker
        record(dispatch, 2)
        assert storage.get_meta(Store(omcm_home), "worker_started") is None  # the hook saw it running
        proc = start_worker(omcm_home, "--idle", "0")
        out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert "embedded 0 observations" in out
    assert queued(omcm_home) == 2


@needs_model
@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="finds the worker process through /proc")
def test_a_real_hook_call_starts_the_worker_which_embeds_and_leaves_with_its_store(tmp_path):
    home = tmp_path / "home"
    env = {**ON, "OMCM_HOME": str(home), "OMCM__POST_TOOL_OBSERVER__WORKER_INTERVAL_S": "0"}
    payload = post_tool_payload("Bash", {"command": "make deploy"}, {"stdout": "deployed to staging", "stderr": ""})
    proc = run_hook(payload, env=env)
    assert (proc.returncode, proc.stdout) == (0, b"")
    lock_dir = home / "plugins" / "post-tool-observer"
    deadline = time.monotonic() + 300  # a hang guard, not a timing assertion
    while not Store(home).query("SELECT count(*) FROM observer_vectors")[0][0]:
        assert time.monotonic() < deadline, "the detached worker embedded nothing"
        time.sleep(0.2)
    assert queued(home) == 0
    assert worker.running(lock_dir) and _worker_alive(home)  # idling for its next job
    shutil.rmtree(home)
    deadline = time.monotonic() + 120
    while _worker_alive(home):
        assert time.monotonic() < deadline, "the worker outlived its store"
        time.sleep(0.2)
    assert not home.exists()  # and recreated nothing


def _worker_alive(home) -> bool:
    """Whether an observer-worker process for this OMCM_HOME still runs (Linux: its environment in /proc)."""
    needle = f"OMCM_HOME={home}".encode()
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                if b"observer-worker" not in fh.read():
                    continue
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    return True
        except (OSError, ValueError):
            continue
    return False


def test_without_the_extra_nothing_is_queued_and_old_jobs_are_dropped(omcm_dispatch, omcm_home, monkeypatch):
    dispatch = omcm_dispatch(names={"post-tool-observer": omcm_post_tool_observer}, env=ON)
    store = Store(omcm_home)
    storage.ready(store)
    with store.transaction() as conn:  # left by an install that had the extra
        conn.execute("INSERT INTO observer_outbox(event_id, created, updated) VALUES('old', 0, 0)")
    monkeypatch.setattr(embedder, "available", lambda: False)
    record(dispatch, 3)
    assert Store(omcm_home).query("SELECT count(*) FROM observer_events")[0][0] == 3
    assert queued(omcm_home) == 1
    assert storage.get_meta(store, "worker_started") is None
    from omcm_core.config import Config
    from omcm_core.context import Context

    ctx = Context("post-tool-observer", omcm_home, None, Config.load(omcm_home, None, ON), ON)
    report = omcm_post_tool_observer.doctor_report(ctx)
    assert "dropped at the next prune" in report["embedding_queue"]
    from omcm_post_tool_observer import retention

    retention.prune(store, 90, 500, ctx.log)
    assert queued(omcm_home) == 0
    assert "embedding_queue" not in omcm_post_tool_observer.doctor_report(ctx)
    ctx.close()


@needs_model
@pytest.mark.parametrize("threads", [1, 2])
def test_batched_encoding_matches_one_text_at_a_time(threads, monkeypatch):
    from omcm_post_tool_observer import minilm

    monkeypatch.setattr(minilm, "TOKENS_PER_BATCH", 300)  # several batches of different lengths
    monkeypatch.setattr(minilm, "FFN_ROWS", 7)  # and feed-forward slices that do not divide them
    model = embedder.load()
    texts = ["Tool: Bash\nCommand: ls", "", "word " * 400, "Tool: Read\nFile: /a/b.py\n" + "def f(): pass\n" * 9, "hi"]
    texts += [f"Tool: Bash\nCommand: pytest tests/test_{i}.py\nResult: Failed" for i in range(9)]
    together = model.encode(texts, threads=threads)
    assert together.shape == (len(texts), 384)
    for text, vector in zip(texts, together, strict=True):
        assert abs(model.encode([text])[0] - vector).max() < 1e-4


@needs_model
def test_vectors_are_the_models_own():
    # Leading components from the plain numpy pass this one replaced (query/key/value unfused,
    # scale not folded, erf GELU out of place); the model is unchanged if these hold.
    expected = [
        [-0.01641, 0.04094, -0.02465, -0.01293, 0.01583, -0.03633],
        [0.09907, -0.01819, -0.05026, -0.09937, -0.04183, -0.05176],
    ]
    vectors = embedder.load().encode(
        ["Tool: Bash\nCommand: pytest -q\nResult: Failed\nAssertionError: widget is broken", "deploy the web server"]
    )
    assert vectors.dtype.name == "float32"
    for vector, leading in zip(vectors, expected, strict=True):
        assert abs(float((vector**2).sum()) - 1.0) < 1e-5
        assert max(abs(float(a) - b) for a, b in zip(vector[:6], leading, strict=True)) < 1e-4


def test_the_worker_does_nothing_without_the_extra(omcm_home, monkeypatch):
    store = Store(omcm_home)
    storage.ready(store)
    with store.transaction() as conn:
        conn.execute("INSERT INTO observer_outbox(event_id, created, updated) VALUES('e', 0, 0)")
    monkeypatch.setattr(embedder, "available", lambda: False)
    monkeypatch.setattr(embedder, "load", lambda: pytest.fail("loaded the model without the extra"))
    lock_dir = omcm_home / "plugins" / "post-tool-observer"
    assert worker.run(store, lock_dir, log=None, idle_s=0) == 0
    assert not lock_dir.exists()  # not even its lock
    assert queued(omcm_home) == 1


def add_jobs(store, count, status="pending", created=0.0):
    with store.transaction() as conn:
        conn.executemany(
            "INSERT INTO observer_outbox(event_id, status, created, updated) VALUES(?, ?, ?, ?)",
            [(f"{status}-{created}-{i}", status, created + i, created + i) for i in range(count)],
        )


def test_queue_state_reports_length_age_and_failures(omcm_home, monkeypatch):
    store = Store(omcm_home)
    storage.ready(store)
    lock_dir = omcm_home / "plugins" / "post-tool-observer"
    monkeypatch.setattr(embedder, "available", lambda: True)
    empty = worker.queue_state(store, lock_dir, bound=10)
    assert (empty.pending, empty.failed, empty.oldest_s, empty.worker_running, empty.problem) == (
        0,
        0,
        None,
        False,
        None,
    )
    add_jobs(store, 4, created=time.time() - 100)
    add_jobs(store, 2, status="failed")
    state = worker.queue_state(store, lock_dir, bound=10)
    assert (state.pending, state.failed) == (4, 2)
    assert 99 <= state.oldest_s < 200
    assert state.problem is None
    assert "over max_pending_embeddings=3" in worker.queue_state(store, lock_dir, bound=3).problem
    monkeypatch.setattr(embedder, "available", lambda: False)
    assert "cannot run without the [embeddings] extra" in worker.queue_state(store, lock_dir, bound=10).problem


def test_the_queue_is_bounded_at_prune_keeping_the_newest_jobs(omcm_home, monkeypatch):
    from omcm_post_tool_observer import retention

    from omcm_core.log import get_logger

    monkeypatch.setattr(embedder, "available", lambda: True)
    store = Store(omcm_home)
    storage.ready(store)
    add_jobs(store, 7, created=1000.0)
    add_jobs(store, 2, status="failed")
    retention.prune(store, 90, 500, get_logger(), max_pending=5)
    rows = store.query("SELECT event_id FROM observer_outbox WHERE status = 'pending' ORDER BY id")
    assert [r[0] for r in rows] == [f"pending-1000.0-{i}" for i in range(2, 7)]
    assert store.query("SELECT count(*) FROM observer_outbox WHERE status = 'failed'")[0][0] == 2
    retention.prune(store, 90, 500, get_logger())  # no bound given: nothing more goes
    assert storage.pending_jobs(store) == 5
