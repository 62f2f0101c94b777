"""search.py is imported by the fast `omcm search` route: nothing heavy at its module level."""

import subprocess
import sys
from pathlib import Path

import omcm_post_tool_observer

SEARCH = Path(omcm_post_tool_observer.__file__).with_name("search.py")


def test_search_module_imports_no_attrs_numpy_or_pluggy():
    # Loaded as a file, as the fast route may, so the package's own __init__ (pluggy, attrs) is not counted.
    probe = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('omcm_search_probe', {str(SEARCH)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "assert module.Filters(project='/p') == module.Filters(None, None, None, False, '/p')\n"
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    loaded = set(subprocess.check_output([sys.executable, "-c", probe], text=True, timeout=120).split())
    assert loaded.isdisjoint({"attr", "attrs", "numpy", "pluggy", "structlog", "tokenizers"}), loaded


def test_filters_keep_their_fields_and_defaults():
    from omcm_post_tool_observer.search import Filters

    default = Filters()
    assert (default.tool, default.file, default.session, default.failures_only, default.project) == (
        None,
        None,
        None,
        False,
        None,
    )
    assert Filters(tool="Read", project="/p").tool == "Read"
    assert hash(Filters(project="/p")) == hash(Filters(project="/p"))  # frozen, usable as a key
