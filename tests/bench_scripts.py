"""Load a script of bench/ (not a package) as a module, for the tests of its functions."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.live import ROOT


def load_bench_script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a dataclass of the script looks its module up there
    spec.loader.exec_module(module)
    return module
