"""The hook's entry file: ``python -S .../omcm_core/fast_hook.py EVENT`` (the plugin launcher runs it so).

``omcm install`` registers ``python -S -c 'exec(HOOK_CODE)' .../fast_hook.py EVENT``
instead (see ``_cli/install.py``): the same few lines, which survive this file's
removal by a reinstall; its path there tells them where the client is.

Python compiles the file it is started with on every run, but loads imported
modules from their cached bytecode: this file stays a few lines and imports
the client (compiling client.py itself took 0.8 ms per call).
"""

import sys

if not getattr(sys.flags, "safe_path", False):
    # This file's folder is sys.path[0]; omcm_core's module names must not shadow anything.
    del sys.path[0]
_here = (__file__[: max(__file__.rfind("/"), __file__.rfind("\\"))] or ".") + "/_runtime"
sys.path.insert(0, _here)
import client  # noqa: E402  (omcm_core/_runtime/client.py, as a top-level module)

sys.path.remove(_here)
client.main(sys.argv[1:])
