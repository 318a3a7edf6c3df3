"""CONTRIBUTING.md's worked examples as code, run as a contributor would use them: copied under a new name.

Each example is a ```python block whose first line names its file (``# dpsynth_core/synth/….py``). A
test takes a block, renames what it names, and runs it as that module of the package, registered in
``sys.modules`` and on its parent package as the one import line would register it; the module is
removed afterwards (the registry entry it made is the test's to remove).
"""

from __future__ import annotations

import importlib
import re
import sys
import types
from contextlib import contextmanager
from typing import Iterator

from tests.conftest import ROOT

BLOCKS = dict(re.findall(r"```python\n# (\S+)\n(.*?)```", (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"),
                         re.S))


def renamed(path: str, renames: dict[str, str]) -> tuple[str, str]:
    """The block headed ``# path`` and its path, each ``old`` of ``renames`` replaced by its ``new``."""
    code = BLOCKS[path]
    for old, new in renames.items():
        assert old in code or old in path, f"{old!r} is not in CONTRIBUTING.md's {path}"
        code, path = code.replace(old, new), path.replace(old, new)
    return path, code


@contextmanager
def example_module(path: str, renames: dict[str, str]) -> Iterator[types.ModuleType]:
    """The block headed ``# path``, renamed, run as its module of the package while the block runs."""
    path, code = renamed(path, renames)
    name = path.removesuffix(".py").replace("/", ".")
    parent_name, _, leaf = name.rpartition(".")
    assert name not in sys.modules, f"{name} exists already: choose another name for the copy"
    module = types.ModuleType(name)
    module.__package__ = parent_name  # its relative imports resolve as the file's would
    sys.modules[name] = module
    parent = importlib.import_module(parent_name)
    setattr(parent, leaf, module)  # as "from . import <leaf>" in the package's __init__.py does
    try:
        exec(compile(code, path, "exec"), module.__dict__)
        yield module
    finally:
        delattr(parent, leaf)
        del sys.modules[name]
