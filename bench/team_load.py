"""Team store under load and faults, and what a team store costs a PreToolUse.

    .venv/bin/python bench/team_load.py                    # both parts, default sizes
    .venv/bin/python bench/team_load.py --users 20 --events 1000 --skip-latency
    .venv/bin/python bench/team_load.py --latency-rounds 60 --skip-load

Needs PostgreSQL's server binaries (``python3 dev.py setup`` installs them as
root) and the team-store plugin (plugins/team-store); starts its own throw-away server in a temp dir.

Load and faults: ``--users`` processes, each its own OMCM_HOME, queue
``--events`` lessons each (drawn from 300 shared keys, so counts merge) and
sync every 25 events. Meanwhile the server is restarted once, then stopped
for ``--cut-s`` seconds (the network cut), and three users are killed with
SIGKILL mid-run and started again (they resume from their outbox). At the end
every user syncs until its outbox is empty, and the script checks, key by key,
that the server's count is exactly the number of lessons queued (nothing lost,
nothing twice) and that every user's local copy equals the server.

Latency: PreToolUse (Edit, pre-tool-guide only, through the registered fast
command and the warm dispatcher) with no team store, with a team store and
sharing on, and with the team store's server stopped; interleaved rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "team"))

KEYS = 300
SYNC_EVERY = 25
KIND = "bench/lesson"
REMOTE = "git@github.com:acme/shop.git"


def key_of(user: int, i: int) -> str:
    return f"lesson-{random.Random(f'{user}-{i}').randrange(KEYS)}"


def make_project(base: Path) -> Path:
    project = base / "project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    (project / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {REMOTE}\n')
    (project / "settings.py").write_text("X = 1\n")
    return project


# -- one simulated user (a subprocess) --------------------------------------------------
def user_main(user: int, base: Path, url: str, events: int) -> int:
    from omcm_team_store.sync import sync

    from omcm_core import team
    from omcm_core.config import Config
    from omcm_core.context import Context

    home = base / f"user{user}"
    env = {"OMCM__CORE__TEAM_STORE": url}
    project = make_project(base / f"clone{user}")
    ctx = Context("bench", home, project, Config.load(home, project, env), env)
    team.ready(ctx.store)
    done = _queued(ctx.store)
    while done < events:
        team.share(ctx, KIND, key_of(user, done), {"error": f"error {key_of(user, done)}", "by": user}, count=1)
        done += 1
        if done % SYNC_EVERY == 0:
            sync(home, ctx.core_config, wait_s=5)
        time.sleep(0.002)
    return 0


def _queued(store) -> int:
    rows = store.query("SELECT seq FROM sqlite_sequence WHERE name = 'team_outbox'")
    return rows[0][0] if rows else 0


# -- the controller ---------------------------------------------------------------------
def load(users: int, events: int, cut_s: float) -> dict:
    import psycopg
    from omcm_team_store import schema
    from omcm_team_store.sync import sync
    from pg_server import start_server

    from omcm_core.config import CoreConfig
    from omcm_core.store import Store

    server = start_server()
    base = Path(tempfile.mkdtemp(prefix="omcm-team-load-"))
    try:
        with psycopg.connect(server.url, autocommit=True) as conn:
            schema.migrate(conn)
        start = time.monotonic()
        procs = {u: _spawn(u, base, server.url, events) for u in range(users)}
        faults = _faults(server, procs, base, events, cut_s)
        for proc in procs.values():
            proc.wait()
        run_s = time.monotonic() - start
        core = CoreConfig(team_store=server.url)
        rounds = 0
        while any(Store(base / f"user{u}").query("SELECT count(*) FROM team_outbox")[0][0] for u in range(users)):
            rounds += 1
            for u in range(users):
                sync(base / f"user{u}", core, wait_s=30)
        for u in range(users):  # a last fetch, so every copy has every other user's lessons
            sync(base / f"user{u}", core, wait_s=30)
        return {**_verify(server.url, base, users), **faults, "run_s": round(run_s, 1), "final_rounds": rounds}
    finally:
        server.destroy()
        shutil.rmtree(base, ignore_errors=True)


def _spawn(user: int, base: Path, url: str, events: int) -> subprocess.Popen:
    argv = [sys.executable, __file__, "--user", str(user), "--base", str(base), "--url", url, "--events", str(events)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _faults(server, procs: dict, base: Path, events: int, cut_s: float) -> dict:
    """Restart the server, kill three users and start them again, cut the server off for ``cut_s``."""
    from omcm_core.store import Store

    def progress() -> float:
        done = 0
        for u in procs:
            try:
                done += _queued(Store(base / f"user{u}"))
            except Exception:
                pass
        return done / (len(procs) * events)

    def wait_for(fraction: float) -> None:
        while progress() < fraction and any(p.poll() is None for p in procs.values()):
            time.sleep(0.2)

    wait_for(0.25)
    server.stop()
    server.start()
    restarted_at = round(progress(), 2)
    killed = []
    for u in random.Random(7).sample(sorted(procs), 3):
        wait_for(0.35 + 0.05 * len(killed))
        procs[u].send_signal(signal.SIGKILL)
        procs[u].wait()
        killed.append(u)
        procs[u] = _spawn(u, base, server.url, events)
    wait_for(0.6)
    cut_at = round(progress(), 2)
    server.stop()
    time.sleep(cut_s)
    server.start()
    return {"restart_at": restarted_at, "cut_at": cut_at, "cut_s": cut_s, "killed_users": killed}


def _verify(url: str, base: Path, users: int) -> dict:
    import psycopg

    from omcm_core.store import Store

    expected: dict[str, int] = {}
    queued = 0
    for u in range(users):
        n = _queued(Store(base / f"user{u}"))
        queued += n
        for i in range(n):
            expected[key_of(u, i)] = expected.get(key_of(u, i), 0) + 1
    with psycopg.connect(url) as conn:
        got = dict(conn.execute("SELECT key, count FROM omcm_team_items WHERE NOT deleted").fetchall())
    copies_equal = all(
        dict(Store(base / f"user{u}").query("SELECT key, count FROM team_items")) == got for u in range(users)
    )
    saw_outage = sum(
        bool(Store(base / f"user{u}").query("SELECT 1 FROM team_meta WHERE name = 'last_error_at'"))
        for u in range(users)
    )
    wrong = {k: (expected.get(k), got.get(k)) for k in set(expected) | set(got) if expected.get(k) != got.get(k)}
    return {
        "users": users,
        "queued": queued,
        "on_server": sum(got.values()),
        "keys": len(got),
        "keys_wrong": len(wrong),
        "every_copy_equals_server": copies_equal,
        "users_whose_sync_failed_at_least_once": saw_outage,
        "exactly_once": not wrong and queued == sum(got.values()),
    }


# -- PreToolUse latency -------------------------------------------------------------------
def latency(rounds: int) -> dict:
    from pg_server import start_server

    from omcm_core._runtime import daemon
    from omcm_core.testing import post_tool_payload, pre_tool_payload

    server = start_server()
    base = Path(tempfile.mkdtemp(prefix="omcm-team-lat-"))
    project = make_project(base)
    fast = [sys.executable, "-S", str(ROOT / "omcm_core" / "fast_hook.py"), "PreToolUse"]
    setups = {
        "no team store": {},
        "team store, sharing on": {"OMCM__CORE__TEAM_STORE": server.url, "OMCM__PRE_TOOL_GUIDE__SHARE": "true"},
    }
    envs = {
        name: {
            **os.environ,
            "OMCM_HOME": str(base / f"home{i}"),
            "OMCM_LOAD_PLUGINS": "pre-tool-guide,team-store",
            "CLAUDE_PROJECT_DIR": str(project),
            "OMCM_DAEMON": "1",
            **extra,
        }
        for i, (name, extra) in enumerate(setups.items())
    }
    edit = {"file_path": str(project / "settings.py"), "old_string": "1", "new_string": "2"}
    omcm = [sys.executable, "-m", "omcm_core"]
    try:
        subprocess.run(
            [*omcm, "team", "init", "--allow-superuser-owner"],
            env=envs["team store, sharing on"],
            check=True,
            capture_output=True,
        )
        for env in envs.values():  # a lesson about the file, so PreToolUse has guidance to find
            for payload in (
                post_tool_payload("Edit", edit, error="File has not been read yet.", session_id="l", cwd=str(project)),
                post_tool_payload("Read", {"file_path": edit["file_path"]}, {}, session_id="l", cwd=str(project)),
                post_tool_payload("Edit", edit, {}, session_id="l", cwd=str(project)),
            ):
                hook = [*fast[:-1], payload["hook_event_name"]]
                subprocess.run(hook, input=json.dumps(payload).encode(), env=env, capture_output=True, check=True)
            subprocess.run([*omcm, "team", "sync"], env=env, capture_output=True)
        raw = json.dumps(pre_tool_payload("Edit", edit, session_id="s", cwd=str(project))).encode()
        times: dict[str, list[float]] = {}
        for phase in ("server up", "server down"):
            if phase == "server down":
                server.stop()
            for r in range(rounds + 3):  # interleaved, so load on the machine hits both alike
                for name, env in envs.items():
                    t0 = time.perf_counter()
                    out = subprocess.run(fast, input=raw, env=env, capture_output=True)
                    elapsed = (time.perf_counter() - t0) * 1000
                    assert out.returncode == 0 and b"Past error" in out.stdout, out
                    if r >= 3:  # the first rounds warm the dispatcher
                        times.setdefault(f"{phase}: {name}", []).append(elapsed)
        return {name: _stats(v) for name, v in times.items()}
    finally:
        for env in envs.values():
            daemon.stop(env)
        server.destroy()
        shutil.rmtree(base, ignore_errors=True)


def in_process(rounds: int) -> dict:
    """The same PreToolUse through the dispatcher in this process: the team's cost without process noise."""
    import omcm_pre_tool_guide
    from omcm_team_store.sync import sync
    from pg_server import start_server

    from omcm_core.config import CoreConfig
    from omcm_core.testing import Dispatcher, post_tool_payload, pre_tool_payload

    server = start_server()
    base = Path(tempfile.mkdtemp(prefix="omcm-team-lat-"))
    project = make_project(base)
    edit = {"file_path": str(project / "settings.py"), "old_string": "1", "new_string": "2"}
    team_env = {"OMCM__CORE__TEAM_STORE": server.url, "OMCM__PRE_TOOL_GUIDE__SHARE": "true"}
    dispatchers = {}
    try:
        subprocess.run(
            [sys.executable, "-m", "omcm_core", "team", "init", "--allow-superuser-owner"],
            env={**os.environ, **team_env},
            check=True,
        )
        for i, (name, extra) in enumerate((("no team store", {}), ("team store, sharing on", team_env))):
            env = {**os.environ, "OMCM_HOME": str(base / f"home{i}"), "CLAUDE_PROJECT_DIR": str(project), **extra}
            # A far interval: no background sync is started while measuring.
            env["OMCM__CORE__TEAM_SYNC_INTERVAL_S"] = "86400"
            d = Dispatcher({"pre-tool-guide": omcm_pre_tool_guide}, env)
            d(post_tool_payload("Edit", edit, error="File has not been read yet.", session_id="l", cwd=str(project)))
            d(post_tool_payload("Edit", edit, {}, session_id="l", cwd=str(project)))
            if extra:
                sync(base / f"home{i}", CoreConfig(team_store=server.url))
            dispatchers[name] = d
        payload = pre_tool_payload("Edit", edit, session_id="s", cwd=str(project))
        times: dict[str, list[float]] = {name: [] for name in dispatchers}
        for r in range(rounds + 20):
            for name, d in dispatchers.items():
                t0 = time.perf_counter()
                out = d(payload)
                if r >= 20:
                    times[name].append((time.perf_counter() - t0) * 1000)
                assert out and "Past error" in out["hookSpecificOutput"]["additionalContext"]
        return {name: _stats(v) for name, v in times.items()}
    finally:
        server.destroy()
        shutil.rmtree(base, ignore_errors=True)


def _stats(values: list[float]) -> dict:
    values = sorted(values)
    return {
        "n": len(values),
        "median_ms": round(statistics.median(values), 3),
        "p95_ms": round(values[int(0.95 * (len(values) - 1))], 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--cut-s", type=float, default=8.0)
    parser.add_argument("--latency-rounds", type=int, default=60)
    parser.add_argument("--skip-load", action="store_true")
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--user", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--base", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.user is not None:
        return user_main(args.user, args.base, args.url, args.events)
    report = {}
    if not args.skip_latency:
        report["in_process"] = in_process(args.latency_rounds * 10)
        print(json.dumps(report["in_process"], indent=2), flush=True)
        report["latency"] = latency(args.latency_rounds)
        print(json.dumps(report["latency"], indent=2), flush=True)
    if not args.skip_load:
        report["load"] = load(args.users, args.events, args.cut_s)
        print(json.dumps(report["load"], indent=2), flush=True)
    ok = report.get("load", {}).get("exactly_once", True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
