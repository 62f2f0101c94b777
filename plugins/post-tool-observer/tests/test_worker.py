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
from omcm_core.testing import post_tool_payload

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
def test_batched_encoding_matches_one_text_at_a_time():
    model = embedder.load()
    texts = ["Tool: Bash\nCommand: ls", "", "word " * 400, "Tool: Read\nFile: /a/b.py\n" + "def f(): pass\n" * 9, "hi"]
    together = model.encode(texts)
    for text, vector in zip(texts, together, strict=True):
        assert abs(model.encode([text])[0] - vector).max() < 1e-4
