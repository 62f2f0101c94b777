"""Team store: reachable, schema new enough, sync keeping up (only when ``[core] team_store`` is set)."""

from __future__ import annotations

from collections.abc import Iterator

from omcm_core._cli.doctor.records import Check, Probe, error, info, ok, warning


def team_store(probe: Probe) -> Iterator[Check]:
    from omcm_core.config import CoreConfig

    core = probe.config.section("core", CoreConfig)
    if not core.team_store:
        yield info("team.off", "no team store configured (see docs/teams.md)")
        return
    if probe.store_blocked:
        yield warning("team.skipped", f"not checked: {probe.store_blocked} (see Installation)")
        return
    try:  # the sync and the server's side are a distribution of their own, installed by teams
        from omcm_team_store.health import team_health
    except ImportError:
        from omcm_core._cli.doctor.plugins import bundled_plugin_hint

        yield error(
            "team.missing",
            "team_store is set but the team-store plugin is not installed: nothing is shipped or fetched",
            fix=bundled_plugin_hint(probe, "team-store"),
        )
        return
    for n, (good, message, fix) in enumerate(team_health(probe.home, core)):
        yield ok(f"team.{n}", message) if good else error(f"team.{n}", message, fix=fix)
