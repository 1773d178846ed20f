"""The type stubs (frenzy/__init__.pyi) describe exactly the module's public API: every public function, class and
class member of the compiled module has a stub and every stub names something that exists, so editors complete
what is really there."""
import ast
import inspect
import pathlib

import frenzy

STUB = pathlib.Path(frenzy.__file__).with_name("__init__.pyi")
ALIASES = {"JsonDict", "PathLike", "JobLike", "ClusterLike", "GpuLike"}  # typing helpers of the stub only


def _stub():
    tree = ast.parse(STUB.read_text())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            top.add(node.name)
            members[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        elif isinstance(node, ast.FunctionDef):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            top.add(node.target.id)
        elif isinstance(node, ast.Assign):
            top.update(t.id for t in node.targets)
    return top - ALIASES, members


def _public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def test_top_level_names():
    top, _ = _stub()
    assert top == set(frenzy.__all__)
    assert set(frenzy.__all__) == _public(frenzy) | {"__version__"}


def test_class_members():
    _, members = _stub()
    for name, stubbed in members.items():
        cls = getattr(frenzy, name)
        if issubclass(cls, BaseException):
            continue
        assert {m for m in stubbed if not m.startswith("_")} == _public(cls), name
        for m in stubbed - _public(cls):
            assert hasattr(cls, m), f"{name}.{m} is stubbed but does not exist"


def test_every_function_has_a_docstring():
    for name in frenzy.__all__:
        obj = getattr(frenzy, name)
        if inspect.isroutine(obj) or inspect.isclass(obj):
            assert obj.__doc__ and obj.__doc__.strip(), name


def test_signatures_name_what_they_accept():
    """help() shows what each argument accepts, never pybind11's 'handle' (issue 26)."""
    for name in frenzy.__all__:
        obj = getattr(frenzy, name)
        if not (inspect.isroutine(obj) or inspect.isclass(obj)) or (inspect.isclass(obj) and issubclass(obj, BaseException)):
            continue
        docs = [obj.__doc__ or ""]
        if inspect.isclass(obj):
            docs += [getattr(obj, m).__doc__ or "" for m in dir(obj) if not m.startswith("__")]
        for d in docs:
            assert "handle" not in d, (name, d.splitlines()[:1])
    first = frenzy.estimate.__doc__.splitlines()[0]
    assert "job: Job | dict | str | os.PathLike" in first and "gpu: str | dict | None = None" in first, first
    assert "cluster: dict | str | os.PathLike" in frenzy.plan.__doc__.splitlines()[0]
