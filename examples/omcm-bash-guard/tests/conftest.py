# The example is not installed in the development environment (the third-party
# install test installs it from a copy outside the repo), so import it from here.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
