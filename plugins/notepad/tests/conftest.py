import pytest


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def env(tmp_path, project):
    return {
        "OMCM_LOAD_PLUGINS": "notepad",
        "OMCM_HOME": str(tmp_path / "home"),
        "CLAUDE_PROJECT_DIR": str(project),
        # A loaded CI machine can take more than the 1.5 s budget to import detect-secrets for the first
        # mask: the answer would then be empty (overran), which these tests are not about.
        "OMCM__CORE__PLUGIN_BUDGET_MS": "30000",
    }
