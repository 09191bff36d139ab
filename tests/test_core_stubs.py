"""The hand-written stubs (python/ssdlab/_core.pyi) against the built module: every public name
on either side exists on the other with the same kind and parameter names."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

import ssdlab
from ssdlab import _core

STUB = Path(ssdlab.__file__).with_name("_core.pyi")


def _public(name: str) -> bool:
    return not name.startswith("_") or name == "__version__"


def _stub_names(body: List[ast.stmt]) -> Dict[str, Tuple[str, ast.AST]]:
    names: Dict[str, Tuple[str, ast.AST]] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef):
            is_property = any(isinstance(d, ast.Name) and d.id == "property" for d in node.decorator_list)
            names[node.name] = ("property" if is_property else "function", node)
        elif isinstance(node, ast.ClassDef):
            names[node.name] = ("class", node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = ("attribute", node)
    return {n: v for n, v in names.items() if _public(n)}


def _stub_params(fn: ast.FunctionDef) -> List[str]:
    return [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs if a.arg not in ("self", "cls")]


def _runtime_params(obj: object) -> List[str]:
    return [p for p in inspect.signature(obj).parameters if p != "self"]  # type: ignore[arg-type]


MODULE = _stub_names(ast.parse(STUB.read_text(encoding="utf-8")).body)


def test_stub_and_module_have_the_same_public_names() -> None:
    runtime = {n for n in dir(_core) if n == "__version__" or not n.startswith("_")}
    assert set(MODULE) == runtime


@pytest.mark.parametrize("name", sorted(MODULE))
def test_each_stubbed_name_has_the_same_kind(name: str) -> None:
    kind, node = MODULE[name]
    obj = getattr(_core, name)
    if kind == "function":
        assert callable(obj) and not inspect.isclass(obj)
        assert isinstance(node, ast.FunctionDef)
        assert _stub_params(node) == _runtime_params(obj)
    elif kind == "class":
        assert inspect.isclass(obj)
    else:
        assert isinstance(node, ast.AnnAssign) and isinstance(node.annotation, ast.Name)
        assert type(obj).__name__ == node.annotation.id


def test_ssdlab_error_is_a_value_error() -> None:
    assert issubclass(_core.SsdlabError, ValueError)
    assert ssdlab.SsdlabError is _core.SsdlabError


def test_simulator_members_match() -> None:
    node = MODULE["Simulator"][1]
    assert isinstance(node, ast.ClassDef)
    members = {n: v for n, v in _stub_names(node.body).items()}
    runtime = {n for n in dir(_core.Simulator) if not n.startswith("_")}
    assert set(members) == runtime
    for name, (kind, fn) in members.items():
        static = inspect.getattr_static(_core.Simulator, name)
        if kind == "property":
            assert not callable(static), name
        else:
            assert callable(static), name
            assert isinstance(fn, ast.FunctionDef)
            assert _stub_params(fn) == _runtime_params(getattr(_core.Simulator, name)), name
    init = next(n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__new__")
    try:
        runtime_init = _runtime_params(_core.Simulator)
    except ValueError:  # abi3 classes carry no text signature before Python 3.10
        return
    assert _stub_params(init) == runtime_init


def test_mypy_stubtest() -> None:
    pytest.importorskip("mypy")
    from mypy import stubtest

    assert stubtest.test_stubs(stubtest.parse_options(["ssdlab._core"])) == 0
