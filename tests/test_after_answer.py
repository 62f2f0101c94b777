"""omcm_core.after_answer: deferred plugin work runs after the answer, in order, on its own connection."""

import json
import subprocess
import sys
import textwrap

from omcm_core import after_answer
from omcm_core._runtime import dispatch
from omcm_core.store import Store
from omcm_core.testing import post_tool_payload

PLUGIN = """
from omcm_core import hookimpl
from omcm_core.after_answer import defer

@hookimpl
def post_tool(event, ctx):
    def write(later):
        with later.store.transaction() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS seen(id TEXT)")
            conn.execute("INSERT INTO seen VALUES(?)", (event.tool_use_id,))
    def fail(later):
        raise RuntimeError("a job that fails")
    defer(ctx, fail)
    defer(ctx, write)
"""


def _seen(home):
    store = Store(home)
    try:
        return [r[0] for r in store.query("SELECT id FROM seen ORDER BY rowid")]
    except Exception:
        return []
    finally:
        store.close()


def test_jobs_are_handed_to_the_caller_and_run_in_order_after(omcm_dispatch, omcm_home, tmp_path):
    module = tmp_path / "omcm_deferring.py"
    module.write_text(PLUGIN)
    sys.path.insert(0, str(tmp_path))
    try:
        import omcm_deferring

        dispatcher = omcm_dispatch(names={"deferring": omcm_deferring}, strict=False)
        later: list = []
        reply = dispatch.handle(
            json.dumps(post_tool_payload("Bash", tool_use_id="first")).encode(),
            None,
            dispatcher.env,
            manager_factory=lambda env: dispatcher.manager,
            later=later,
        )
        assert reply.exit_code == 0 and len(later) == 2
        assert _seen(omcm_home) == []  # answered; nothing done yet
        runner = after_answer.Runner()
        runner.submit(later)
        dispatcher(post_tool_payload("Bash", tool_use_id="second"))  # no caller defers: done before it returns
        assert runner.wait(30)
        # The failing job was logged and cost nothing; each call's write landed once.
        assert sorted(_seen(omcm_home)) == ["first", "second"]
        log = (omcm_home / "logs" / "omcm.jsonl").read_text()
        assert "after_answer_failed" in log and "a job that fails" in log
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("omcm_deferring", None)


def test_the_runner_finishes_queued_jobs_before_the_process_exits(tmp_path):
    script = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        from omcm_core import after_answer
        from omcm_core.config import Config
        from omcm_core.context import Context

        home = Path({str(tmp_path / "home")!r})
        ctx = Context("p", home, None, Config.load(home, None, {{}}), {{}})

        def slow(later, i):
            time.sleep(0.2)
            with later.store.transaction() as conn:
                conn.execute("CREATE TABLE IF NOT EXISTS seen(id TEXT)")
                conn.execute("INSERT INTO seen VALUES(?)", (str(i),))

        after_answer.RUNNER.submit([(ctx, lambda later, i=i: slow(later, i)) for i in range(3)])
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
    assert _seen(tmp_path / "home") == ["0", "1", "2"]
