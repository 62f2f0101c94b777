import pytest


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def env(tmp_path, project):
    return {"OMCM_LOAD_PLUGINS": "notepad", "OMCM_HOME": str(tmp_path / "home"), "CLAUDE_PROJECT_DIR": str(project)}
