"""Shared by every lane: the kernel fuzz module (tests/fuzz) is importable as ``kernel_fuzz``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "fuzz"))
