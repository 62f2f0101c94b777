"""The local outbox, read before any sync: what waits there is already masked (issue 30 item 9).

The sync masks again when it ships, so a queue that forgot to mask would go
unnoticed by every test that looks at the server only.
"""

from __future__ import annotations

import json

from omcm_core import team
from omcm_core.config import Config
from omcm_core.context import Context

TOKEN = "ghp_" + "Q7w9Zr2Xk4Lm8Np3Vt6Yb1Hc5Jd0Fs2Ga9Ke"


def test_a_queued_row_is_masked_in_the_outbox_before_any_sync(tmp_path):
    home = tmp_path / "home"
    env = {"OMCM__CORE__TEAM_STORE": "postgresql://team@/db?host=/nowhere"}
    ctx = Context("tester", home, None, Config.load(home, None, env), env)
    payload = {"error": f"auth failed for {TOKEN}", "nested": {"password": "hunter2-but-longer"}, "gone": None}
    team.share(ctx, "t/x", f"key {TOKEN}", payload)
    ((key, stored),) = ctx.store.query("SELECT key, payload FROM team_outbox")
    assert TOKEN not in key and TOKEN not in stored and "hunter2-but-longer" not in stored
    assert json.loads(stored)["error"].startswith("auth failed for ") and "gone" not in json.loads(stored)
