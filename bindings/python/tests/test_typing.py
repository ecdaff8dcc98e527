"""The package is typed (PEP 561): its wheel ships ``py.typed`` and stubs of the compiled module
(``_envdist.pyi``) that match the module as built, name for name and parameter for parameter, and
mypy finds no type error in the package or its examples."""

from __future__ import annotations

import ast
import inspect
import os
import pathlib
import subprocess
import sys
import zipfile

import pytest

from envdist import _envdist

HERE = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = HERE / "python" / "envdist"
STUB = PACKAGE / "_envdist.pyi"

# Dunder methods a class may expose besides the constructor (compared like public names).
DUNDERS = {"__len__", "__iter__", "__getitem__", "__contains__", "__call__"}


def _stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text(), str(STUB))


def _stub_names(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    """The names a stub body defines (type aliases, which start with `_`, left out)."""
    names: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names[t.id] = node
    return {n: v for n, v in names.items() if not n.startswith("_") or n == "__version__" or n in DUNDERS}


def _stub_params(fn: ast.FunctionDef) -> list[tuple[str, object]]:
    """A stub function's parameters (`self` and `cls` left out) as (name, default), the default
    ``inspect.Parameter.empty`` where there is none."""
    args = fn.args
    positional = args.posonlyargs + args.args
    defaults = [inspect.Parameter.empty] * (len(positional) - len(args.defaults)) + [
        ast.literal_eval(d) for d in args.defaults
    ]
    params = [(a.arg, d) for a, d in zip(positional, defaults)]
    params += [
        (a.arg, inspect.Parameter.empty if d is None else ast.literal_eval(d))
        for a, d in zip(args.kwonlyargs, args.kw_defaults)
    ]
    return [(n, d) for n, d in params if n not in ("self", "cls")]


def _runtime_params(obj) -> list[tuple[str, object]]:
    """The built object's parameters, from the text signature pyo3 gives it."""
    sig = inspect.signature(obj)
    return [(p.name, p.default) for p in sig.parameters.values() if p.name not in ("self", "cls")]


def _same_params(built: list[tuple[str, object]], stub: list[tuple[str, object]]) -> bool:
    """The same names in the same order, defaults in the same places, and equal defaults where
    both are written out (pyo3 writes a default it cannot spell, as `vec![]`, as `...`)."""
    empty = inspect.Parameter.empty
    return len(built) == len(stub) and all(
        bn == sn and (bd is empty) == (sd is empty) and (bd in (empty, ...) or sd is ... or bd == sd)
        for (bn, bd), (sn, sd) in zip(built, stub)
    )


def test_the_wheel_ships_py_typed_and_the_stubs(tmp_path):
    """The wheel `pip install ./bindings/python` builds (with maturin, as the build backend does;
    the dev profile, which the test run has built already) holds both files."""
    pytest.importorskip("maturin", reason="maturin is in requirements-test.txt (the core tier)")
    run = subprocess.run(
        [sys.executable, "-m", "maturin", "build", "--profile", "dev", "--locked", "--out", str(tmp_path)],
        cwd=HERE, capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    (wheel,) = tmp_path.glob("envdist-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"envdist/py.typed", "envdist/_envdist.pyi"} <= names, sorted(names)


def test_every_name_of_the_compiled_module_has_a_stub_and_every_stub_a_name():
    stubs = _stub_names(_stub_tree().body)
    built = set(_envdist.__all__)
    assert built == set(vars(_envdist)) & built, "every name pyo3 added is in the module"
    assert sorted(set(stubs) - built) == [], "stubs of names the module lacks"
    assert sorted(built - set(stubs)) == [], "names of the module without a stub"


def test_every_class_member_and_parameter_matches_its_stub():
    problems = []
    for name, node in _stub_names(_stub_tree().body).items():
        obj = getattr(_envdist, name)
        if isinstance(node, ast.FunctionDef):
            if not _same_params(_runtime_params(obj), _stub_params(node)):
                problems.append(f"{name}: built {_runtime_params(obj)}, stub {_stub_params(node)}")
        if not isinstance(node, ast.ClassDef):
            continue
        members = _stub_names(node.body)
        built = {m for m in vars(obj) if not m.startswith("_") or m in DUNDERS}
        if built != set(members):
            problems.append(f"{name}: built members {sorted(built)}, stub members {sorted(members)}")
        new = next(n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__new__")
        if not _same_params(_runtime_params(obj), _stub_params(new)):
            problems.append(f"{name}(): built {_runtime_params(obj)}, stub {_stub_params(new)}")
        for m in sorted(built & set(members)):
            stub, attr = members[m], inspect.getattr_static(obj, m)
            is_property = isinstance(stub, ast.FunctionDef) and any(
                isinstance(d, ast.Name) and d.id == "property" for d in stub.decorator_list
            )
            if is_property != inspect.isgetsetdescriptor(attr):
                problems.append(f"{name}.{m}: a getter in one, not in the other")
            elif not is_property and isinstance(stub, ast.FunctionDef) and m not in DUNDERS:
                if not _same_params(_runtime_params(attr), _stub_params(stub)):
                    problems.append(f"{name}.{m}: built {_runtime_params(attr)}, stub {_stub_params(stub)}")
    assert not problems, "\n".join(problems)


def test_mypy_finds_no_type_error_in_the_package_and_its_examples():
    pytest.importorskip("mypy", reason="mypy is in requirements-test.txt (the core tier)")
    examples = sorted(str(p) for p in (HERE / "examples").glob("*.py"))
    assert examples
    # The cache beside the test environment (outside the repo), so later runs are quick.
    cache = os.path.join(sys.prefix, ".mypy_cache")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(HERE / "pyproject.toml"),
         "--cache-dir", cache, str(PACKAGE), *examples],
        cwd=HERE, capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
