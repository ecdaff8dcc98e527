"""Errors in the user's words at every public entry of the package: the sweep below finds every
public function, class and method by introspection (so a new entry is swept as soon as it is
exported), calls it with wrong types and out-of-range values one argument at a time, and fails
on a message in serde's or pyo3's words ("usize", "variant", "line 1 column", ...), on a
message that does not name the argument, and on an exception other than TypeError, ValueError
or (unknown ids) KeyError, or (paths) FileNotFoundError: no OverflowError, no AttributeError,
no panic.

The trainers' adapters (``envdist.adapters.syllabus`` and ``.verl``) take the trainers' own
objects (Syllabus task spaces, verl configs and batches) and are driven by the integration
tests instead; ``envdist.adapters.vagen`` and ``.verl_reward`` (verl's reward function, which
needs no trainer package) are swept with the rest."""

from __future__ import annotations

import importlib
import inspect
import json
import math
import re
import types

import numpy as np
import pytest

import envdist
import envdist.adapters.vagen

#: The modules whose public names are swept (their ``__all__``).
MODULES = [
    "envdist",
    "envdist.curriculum",
    "envdist.env",
    "envdist.profiling",
    "envdist.registration",
    "envdist.selection",
    "envdist.vector",
    "envdist.wrappers",
    "envdist.adapters.vagen",
    "envdist.adapters.verl_reward",
]

#: Words of serde, pyo3 or Rust's types that must never reach a user (Rust's integer types in
#: lower case: numpy's dtypes, such as <U8, are the user's own words).
FORBIDDEN = re.compile(
    r"\b(usize|isize|[ui](8|16|32|64|128)|f32|f64)\b"
    r"|(?i:variant|line \d+ column \d+|is not an instance of|invalid type:|invalid value:|unit value"
    r"|PanicException|called `\w+::unwrap)"
)


class Opaque:
    """A value of no type any entry accepts."""

    def __repr__(self):
        return "<Opaque>"


#: The wrong values each argument is tried with, by name (for the message).
BAD = {
    "opaque": Opaque(),
    "negative": -1,
    "huge": 10**30,
    "float_huge": 1e39,
    "nan": math.nan,
    "text": "nonsense",
    "empty_list": [],
    "dict": {"nonsense": 1},
}

COUNTS = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]], dtype=np.int64)


@pytest.fixture(scope="module")
def chat_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("log") / "chat.jsonl"
    env = envdist.make("maze/classic")
    _, info = env.reset(seed=1)
    move = envdist.ACTION_NAMES[env.oracle_action()]
    path.write_text(
        json.dumps({"env_id": "maze/classic", "episode": 1, "seed": 1, "scale": info["scale"], "harness": "H4",
                    "messages": [{"role": "assistant", "content": move}]}) + "\n"
    )
    return str(path)


def _env():
    env = envdist.make("maze/classic")
    env.reset(seed=0)
    return env


def _vec():
    env = envdist.vector.make(["maze/classic", "sokoban/classic"], 2)
    env.reset(seed=0)
    return env


def _curriculum_env():
    env = envdist.wrappers.CurriculumEnv(envdist.HDC(["maze/classic"], seed=0))
    env.reset(seed=0)
    return env


def _vagen():
    env = envdist.adapters.vagen.VagenEnv("maze/classic")
    env.reset(seed=0)
    return env


#: A valid call of every entry with required arguments (keyword -> value, or a function of the
#: chat log's path for those that read a file).
VALID: dict[str, dict] = {
    "envdist.curriculum.Curriculum": {"kind": "hdc", "env_ids": ["maze/classic"]},
    "envdist.curriculum.HDC": {"env_ids": ["maze/classic"]},
    "envdist.curriculum.Ticket": {"env_id": "maze/classic", "harness": "H4", "scale": 3, "seed": 0},
    "envdist.curriculum.Ticket.parse": {"ticket": "maze/classic|H4|3|0"},
    "envdist.curriculum.default_config": {"kind": "hdc"},
    "envdist.env.EnvdistEnv": {"env_id": "maze/classic"},
    "envdist.env.make": {"env_id": "maze/classic"},
    "envdist.env.parse_action": {"text": "left"},
    "envdist.env.mask_array": {"mask": 5},
    "envdist.env.join_channels": {"channels": {"rules": "r", "state": None}},
    "envdist.spec": {"env_id": "maze/classic"},
    "envdist.profiling.profile_log": {"path": "CHAT_LOG"},
    "envdist.registration.gym_id": {"env_id": "maze/classic"},
    "envdist.selection.select": {"profiles": COUNTS, "k": 2},
    "envdist.selection.defaults": {},
    "envdist.vector.EnvdistVectorEnv": {"env_ids": ["maze/classic"]},
    "envdist.vector.make": {"env_ids": ["maze/classic"]},
    "envdist.vector.make_registered": {"env_id": "maze/classic"},
    "envdist.wrappers.CurriculumEnv": {"sampler": "HDC"},
    "envdist.wrappers.NumpyObservation": {"env": "ENV"},
    "envdist.wrappers.bag_of_words": {"text": "a b"},
    "envdist.wrappers.char_ids": {"text": "a b", "length": 4},
    "envdist.wrappers.make": {"env_id": "maze/classic"},
    "envdist.wrappers.make_vec": {"env_ids": "maze/classic", "num_envs": 2},
    "envdist.adapters.vagen.VagenEnv": {"env_id": "maze/classic"},
    "envdist.adapters.verl_reward.compute_score": {"solution_str": "3", "ground_truth": "count-objects/classic|H4|5|0"},
    "envdist.adapters.verl_reward.score_reply": {"ticket": "count-objects/classic|H4|5|0", "reply": "3"},
}

#: Instances whose methods are swept, each made ready to step.
INSTANCES = {
    "envdist.curriculum.Curriculum": lambda: envdist.Curriculum("plr", ["maze/classic"], seed=0),
    "envdist.curriculum.HDC": lambda: envdist.HDC(["maze/classic", "sokoban/classic"], seed=0),
    "envdist.env.EnvdistEnv": _env,
    "envdist.vector.EnvdistVectorEnv": _vec,
    "envdist.wrappers.CurriculumEnv": _curriculum_env,
    "envdist.wrappers.NumpyObservation": lambda: envdist.wrappers.make("maze/classic"),
    "envdist.adapters.vagen.VagenEnv": _vagen,
    "envdist.curriculum.Ticket": lambda: envdist.Ticket("maze/classic", "H4", 3, 0),
}

#: Valid arguments of the methods with required ones.
METHOD_VALID = {
    "step": lambda obj: {"actions": [0] * obj.num_envs} if hasattr(obj, "num_envs") else (
        {"action_str": "left"} if isinstance(obj, envdist.adapters.vagen.VagenEnv) else {"action": 0}),
    "update": lambda obj: {"ticket_ids": obj.sample(1), "successes": [True]},
    "trains_on": lambda obj: {"ticket_ids": obj.sample(1)},
    "load_state_dict": lambda obj: {"state": obj.state_dict()},
    "to_rows": lambda obj: {"n": 1},
    "harness_text": lambda obj: {"i": 0} if hasattr(obj, "num_envs") else {},
    "observation": lambda obj: {"obs": obj.env.reset(seed=0)[0]},
    "parse": lambda obj: {"ticket": "maze/classic|H4|3|0"},
    "parse_action": lambda obj: {"text": "left"},
}

#: Public names that are not entries to sweep, and why.
NOT_SWEPT = {
    "envdist.selection.Selection": "a result: only select() makes one",
    "envdist.selection.Certificate": "a result: part of a Selection",
    "envdist.env.ResetNeeded": "an exception type",
    "envdist.curriculum.TaskSampler": "a base class: built by Curriculum / HDC, whose methods are swept",
    "envdist.registration.register_envs": "takes no arguments",
}


def _qualname(obj) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def public_entries():
    """Every public function and class of MODULES, once each (by the module defining it)."""
    seen = {}
    for name in MODULES:
        mod = importlib.import_module(name)
        for attr in getattr(mod, "__all__", []):
            obj = getattr(mod, attr)
            if isinstance(obj, types.ModuleType) or not callable(obj):
                continue
            seen.setdefault(_qualname(obj), obj)
    return seen


def _resolve(value, chat_log):
    if not isinstance(value, str):
        return value
    if value == "CHAT_LOG":
        return chat_log
    if value == "HDC":
        return envdist.HDC(["maze/classic"], seed=0)
    if value == "ENV":
        return envdist.make("maze/classic")
    return value


def _swept_parameters(fn):
    sig = inspect.signature(fn)
    return [
        p for p in sig.parameters.values()
        if p.name not in ("self", "cls") and not p.name.startswith("_")
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def _check(label, param, bad_name, call):
    """Call; a refusal must be a TypeError / ValueError / KeyError in the user's words,
    naming the argument. Returns a problem description or None."""
    try:
        call()
    except (TypeError, ValueError, KeyError, FileNotFoundError) as e:
        message = e.args[0] if e.args and isinstance(e.args[0], str) else str(e)
        if FORBIDDEN.search(message):
            return f"{label}({param}={bad_name}): {type(e).__name__} in serde/pyo3 words: {message}"
        if param not in message:
            return f"{label}({param}={bad_name}): {type(e).__name__} does not name `{param}`: {message}"
        return None
    except Exception as e:  # noqa: BLE001 - what we test is that nothing else escapes
        return f"{label}({param}={bad_name}): {type(e).__name__}: {e}"
    except BaseException as e:  # pyo3's PanicException is a BaseException
        return f"{label}({param}={bad_name}): {type(e).__name__} (a panic?): {e}"
    if bad_name == "opaque":
        return f"{label}({param}=<Opaque>): accepted a value of no type it documents"
    return None


def test_every_public_entry_has_a_valid_call_or_a_reason():
    """The sweep below covers an entry only with a valid call to vary: a new entry needs one."""
    missing = []
    for qual, obj in public_entries().items():
        if qual in NOT_SWEPT:
            continue
        required = [p.name for p in _swept_parameters(obj) if p.default is inspect.Parameter.empty]
        if required and not set(required) <= set(VALID.get(qual, {})):
            missing.append(f"{qual}: add a valid call to VALID (required: {required})")
        if inspect.isclass(obj) and qual not in INSTANCES and _methods(obj):
            missing.append(f"{qual}: add an instance to INSTANCES (its methods are swept)")
    assert not missing, "\n".join(missing)
    # The sweep reaches every module: each one's entries are found.
    found_modules = {q.rsplit(".", 1)[0] for q in public_entries()}
    assert {"envdist.selection", "envdist.vector", "envdist.wrappers", "envdist.curriculum"} <= found_modules


def _methods(cls):
    """Public methods defined by envdist's own classes (not Gymnasium's)."""
    out = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("envdist"):
            continue
        for name, fn in vars(klass).items():
            if isinstance(fn, (classmethod, staticmethod)):
                fn = fn.__func__
            if not name.startswith("_") and inspect.isfunction(fn):
                out[name] = fn
    return out


def test_every_public_function_and_class_refuses_bad_arguments_in_the_users_words(chat_log, tmp_path, monkeypatch):
    # Paths among the bad values ("nonsense" as an output directory) land in a scratch dir.
    monkeypatch.chdir(tmp_path)
    problems = []
    for qual, obj in public_entries().items():
        if qual in NOT_SWEPT:
            continue
        for p in _swept_parameters(obj):
            for bad_name, bad in BAD.items():
                def call(p=p, bad=bad):
                    kwargs = {k: _resolve(v, chat_log) for k, v in VALID.get(qual, {}).items()}
                    kwargs[p.name] = bad
                    return obj(**kwargs)
                problem = _check(qual, p.name, bad_name, call)
                if problem:
                    problems.append(problem)
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)


def test_every_public_method_refuses_bad_arguments_in_the_users_words(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    problems = []
    for qual, make in INSTANCES.items():
        cls = public_entries()[qual]
        for name, fn in _methods(cls).items():
            for p in _swept_parameters(fn):
                for bad_name, bad in BAD.items():
                    def call(name=name, p=p, bad=bad):
                        obj = make()
                        kwargs = METHOD_VALID[name](obj) if name in METHOD_VALID else {}
                        kwargs[p.name] = bad
                        return getattr(obj, name)(**kwargs)
                    problem = _check(f"{qual}.{name}", p.name, bad_name, call)
                    if problem:
                        problems.append(problem)
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)


def test_the_sweep_reaches_every_entry_and_argument():
    """The sweeps above are not vacuous: they find the entries and arguments the issue names."""
    entries = public_entries()
    for qual in ("envdist.selection.select", "envdist.env.make", "envdist.vector.EnvdistVectorEnv",
                 "envdist.curriculum.Curriculum", "envdist.profiling.profile_log", "envdist.wrappers.make"):
        assert qual in entries, qual
    params = sum(len(_swept_parameters(obj)) for q, obj in entries.items() if q not in NOT_SWEPT)
    methods = sum(len(_swept_parameters(fn)) for q in INSTANCES for fn in _methods(entries[q]).values())
    assert params >= 80 and methods >= 20, (params, methods)
    assert "harness_text" in _methods(entries["envdist.vector.EnvdistVectorEnv"])


def _message(excinfo) -> str:
    e = excinfo.value
    return e.args[0] if e.args and isinstance(e.args[0], str) else str(e)


def test_the_issues_cases_in_the_users_words():
    counts = np.eye(4, dtype=np.int64)
    with pytest.raises(ValueError) as e:
        envdist.select(counts, k=-1)
    assert _message(e) == "k: expected a number of environments at least 1, found -1"
    with pytest.raises(ValueError) as e:
        envdist.select(counts, k=2, tie_break="seeded")
    assert "tie_break" in _message(e) and "tie_break=123 or {'seeded': 123}" in _message(e)
    # The same through a config dict, which Rust reads: serde's words are translated too.
    with pytest.raises(ValueError) as e:
        envdist.select(counts, config={"k": 2, "tie_break": "seeded"})
    assert _message(e).startswith("config: tie_break:"), _message(e)
    with pytest.raises(TypeError) as e:
        envdist.make(3)
    assert _message(e) == "env_id: expected an environment id (a str such as 'maze/classic'), found int 3"
    env = envdist.vector.make("maze/classic", 2)
    env.reset(seed=0)
    with pytest.raises(ValueError) as e:
        env.harness_text(-1)
    assert _message(e) == "i: expected an env index from 0 to 1, found -1"
    one = envdist.make("maze/classic")
    one.reset(seed=0)
    with pytest.raises(ValueError) as e:
        one.step(22)
    assert "expected an index from 0 to 21 or an action name, found 22" in _message(e)
    g = np.zeros((4, 3))
    g[2, 1] = 1e39
    with pytest.raises(ValueError) as e:
        envdist.select(counts, g, k=2)
    assert _message(e).startswith("gradients[2][1]: 1e+39 is out of float32's range"), _message(e)
    for m in map(str, (e.value,)):
        assert not FORBIDDEN.search(m), m


@pytest.mark.parametrize("kind", envdist.sampler_kinds())
def test_every_config_field_of_every_sampler_refuses_bad_values_in_the_users_words(kind):
    """Config dicts are read by Rust (serde): each field of each kind, with wrong values."""
    problems = []
    for field, default in envdist.default_config(kind).items():
        for bad_name, bad in BAD.items():
            def call(field=field, bad=bad):
                envdist.Curriculum(kind, ["maze/classic"], {field: bad})
            problem = _check(f"Curriculum({kind!r}, config)", field, bad_name, call)
            if problem:
                problems.append(problem)
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)


def test_every_select_option_in_a_config_dict_refuses_bad_values_in_the_users_words():
    problems = []
    for field in envdist.selection.defaults():
        for bad_name, bad in BAD.items():
            def call(field=field, bad=bad):
                envdist.select(COUNTS, config={"k": 2, field: bad})
            problem = _check("select(config)", field, bad_name, call)
            if problem:
                problems.append(problem)
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)
