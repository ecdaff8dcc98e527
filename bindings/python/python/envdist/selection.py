"""AES selection on numpy arrays or on the files the CLI reads."""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _check, _envdist


#: The optimizers (``optimizer=``): the greedy ones and the exact search (pools of at most 256).
OPTIMIZERS = ("lazy", "naive", "stochastic", "exact")
#: How an ability counts for coverage and redundancy (``ability_weighting=``).
ABILITY_WEIGHTINGS = ("uniform", "frequency", "rarity")
#: How a candidate's conflicts with the chosen set aggregate (``aggregation=``).
AGGREGATIONS = ("max", "mean", "sum")
#: The three AES terms (keys of ``weights=`` and ``terms=``).
TERMS = ("coverage", "redundancy", "conflict")
#: float32's largest finite value: gradients, weights and counts are float32 in Rust.
FLOAT32_MAX = float(np.finfo(np.float32).max)


def defaults() -> dict[str, Any]:
    """Every option of :func:`select` with its default, as the selection crate defines them
    (``SelectConfig::default()``), in the form :func:`select`'s ``config`` takes."""
    return json.loads(_envdist.select_defaults_json())


@dataclass(frozen=True)
class Certificate:
    """How far a selection can be from the best one: its objective beside an upper bound on
    the optimum over every selection of ``k`` (``str(cert)`` says it in one line)."""

    #: Which bound holds for this objective: ``"submodular"`` (coverage alone),
    #: ``"submodular_minus_modular"`` (coverage and redundancy), ``"conflict_dropped"``
    #: (clamped conflict on: the bound ignores the conflict) or ``"unclamped"`` (no bound).
    kind: str
    #: The selection's objective.
    value: float
    #: Upper bound on the optimum; None for ``"unclamped"``.
    upper_bound: float | None
    #: ``(upper_bound - value) / upper_bound`` (>= 0) when the bound is positive.
    gap_fraction: float | None
    #: Weighted coverage of the selection, and an upper bound on any selection's coverage.
    coverage: float
    coverage_upper_bound: float
    #: The prefix of the ranking the bound was attained at (None: the caps were lower).
    best_prefix: int | None
    prefixes_evaluated: int
    #: One line on why the bound holds (the ``kind``'s explanation).
    explanation: str
    #: The one-line summary (``within X% of optimal (objective .. <= OPT <= ..); coverage ..``).
    summary: str = field(repr=False)

    @property
    def within_percent(self) -> float | None:
        """``100 * gap_fraction``: the selection is within this many percent of optimal."""
        return None if self.gap_fraction is None else 100.0 * self.gap_fraction

    def __str__(self) -> str:
        return self.summary


@dataclass
class Selection:
    """The result of :func:`select`."""

    #: Selected environment indices (rows of the profiles), in pick order.
    ranking: np.ndarray
    #: Selected environment ids, in pick order.
    env_ids: list[str]
    #: Marginal gain of each pick.
    gains: np.ndarray
    #: Per pick, each term's signed share of the gain: ``coverage`` (>= 0), ``redundancy``
    #: (<= 0), ``conflict`` (<= 0 when clamped), and ``reason`` (greedy, must_include, ...).
    trace: dict[str, np.ndarray]
    #: Sum of the gains.
    objective: float
    #: Abilities covered / coverable / in the problem; names left uncovered.
    covered: int
    coverable: int
    abilities: int
    uncovered: list[str]
    #: ``aes/lazy``, ``aes/naive``, ``aes/stochastic`` or ``aes/exact``.
    method: str
    notes: list[str]
    #: What ``relax=True`` gave up to make an infeasible selection feasible (``gave_up``:
    #: ``zero_gradient_kept``, ``full_coverage`` or ``both``, and the ``reason``), or None.
    relaxation: dict | None
    #: How far from optimal the selection can be (None with ``certify=False``).
    certificate: Certificate | None = None
    #: The whole selection as the CLI writes it (JSON-compatible).
    raw: dict = field(default_factory=dict, repr=False)


def _matrix(name: str, a: Any, allow_bool: bool) -> np.ndarray:
    if isinstance(a, (str, bytes, Mapping)) or a is None:
        raise TypeError(f"{name}: expected a 2-D numeric array, found {type(a).__name__}")
    try:
        arr = np.asarray(a)
    except (TypeError, ValueError):
        arr = np.asarray(a, dtype=object)
    kinds = "biuf" if allow_bool else "iuf"
    if arr.dtype.kind not in kinds:
        raise TypeError(
            f"{name}: expected a numeric array ({'bool, ' if allow_bool else ''}int or float), found dtype {arr.dtype}"
        )
    if arr.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array (environments x {'abilities' if allow_bool else 'dims'}), found shape {arr.shape}")
    if arr.dtype.kind == "f" and arr.size:
        # Rust reads float32: a float64 beyond its range would arrive as inf.
        wide = np.abs(arr.astype(np.float64, copy=False))
        bad = np.flatnonzero(np.isfinite(wide) & (wide > FLOAT32_MAX))
        if bad.size:
            i, j = np.unravel_index(int(bad[0]), arr.shape)
            raise ValueError(
                f"{name}[{i}][{j}]: {float(arr[i, j])!r} is out of float32's range (|x| <= {FLOAT32_MAX:.7g}); "
                "the values are read as float32"
            )
    return np.ascontiguousarray(arr, dtype=np.float32)


def _names(name: str, value: Any, n: int | None) -> list[str]:
    names = _check.strings(name, value)
    if n is not None and len(names) != n:
        raise ValueError(f"{name}: expected {n} names (one per {'row' if name == 'env_ids' else 'column'}), found {len(names)}")
    seen: dict[str, int] = {}
    for i, x in enumerate(names):
        if x in seen:
            raise ValueError(f"{name}[{i}]: expected unique names, found {x!r} again ({name}[{seen[x]}] is {x!r})")
        seen[x] = i
    return names


def _terms_mapping(name: str, value: Any, check) -> dict:
    m = _check.mapping(name, value, f"a dict with some of the keys {', '.join(TERMS)}")
    unknown = sorted(set(m) - set(TERMS), key=str)
    if unknown:
        raise ValueError(f"{name}: expected keys among {', '.join(TERMS)}, found {', '.join(map(repr, unknown))}")
    return {t: check(f"{name}[{t!r}]", v) for t, v in m.items()}


def _optimizer(value: Any) -> dict:
    """``optimizer=`` as the config's ``{"kind": ...}``."""
    if isinstance(value, str):
        _check.choice("optimizer", value, OPTIMIZERS)
        if value == "stochastic":
            raise ValueError(
                "optimizer: 'stochastic' needs its epsilon and seed: "
                "optimizer={'kind': 'stochastic', 'epsilon': 0.1, 'seed': 0}"
            )
        return {"kind": value}
    m = dict(_check.mapping("optimizer", value, f"one of {', '.join(map(repr, OPTIMIZERS))} or a dict with a 'kind'"))
    kind = _check.choice("optimizer['kind']", m.pop("kind", None), OPTIMIZERS)
    fields = {"stochastic": ("epsilon", "seed"), "exact": ("max_nodes", "max_seconds")}.get(kind, ())
    unknown = sorted(set(m) - set(fields), key=str)
    if unknown:
        raise ValueError(
            f"optimizer: the {kind} optimizer takes {'the keys ' + ', '.join(fields) if fields else 'no other keys'}, "
            f"found {', '.join(map(repr, unknown))}"
        )
    out: dict[str, Any] = {"kind": kind}
    if kind == "stochastic":
        for f in fields:
            if f not in m:
                raise ValueError(f"optimizer: the stochastic optimizer needs '{f}' (e.g. {{'epsilon': 0.1, 'seed': 0}})")
        eps = _check.number("optimizer['epsilon']", m["epsilon"])
        if not 0 < eps < 1:
            raise ValueError(f"optimizer['epsilon']: expected a number between 0 and 1, both excluded, found {eps!r}")
        out["epsilon"] = eps
        out["seed"] = _check.seed("optimizer['seed']", m["seed"])
    elif kind == "exact":
        if "max_nodes" in m:
            out["max_nodes"] = _check.integer("optimizer['max_nodes']", m["max_nodes"], 1, _check.U64_MAX, "a number of nodes")
        if "max_seconds" in m:
            out["max_seconds"] = _check.number("optimizer['max_seconds']", m["max_seconds"], 1e-9, 1e9)
    return out


def _tie_break(value: Any) -> Any:
    """``tie_break=`` as the config's ``"lowest_index"`` or ``{"seeded": seed}``."""
    if value == "lowest_index" and isinstance(value, str):
        return "lowest_index"
    if _check.is_int(value):
        return {"seeded": _check.seed("tie_break", value)}
    if isinstance(value, Mapping):
        if set(value) != {"seeded"}:
            raise ValueError(f"tie_break: expected 'lowest_index', a seed, or {{'seeded': seed}}, found {value!r}")
        return {"seeded": _check.seed("tie_break['seeded']", value["seeded"])}
    if isinstance(value, str):
        hint = " (a seeded tie-break needs its seed: tie_break=123 or {'seeded': 123})" if value == "seeded" else ""
        raise ValueError(f"tie_break: expected 'lowest_index', a seed, or {{'seeded': seed}}, found {value!r}{hint}")
    raise TypeError(f"tie_break: expected 'lowest_index', an integer seed, or {{'seeded': seed}}, found {type(value).__name__}")


def _weight(name: str, value: Any) -> float:
    return _check.number(name, value, 0.0, FLOAT32_MAX)


#: Each option: how :func:`select` checks it and turns it into the config's value.
_OPTIONS = {
    "k": lambda v: _check.integer("k", v, 1, None, "a number of environments"),
    "weights": lambda v: _terms_mapping("weights", v, _weight),
    "terms": lambda v: _terms_mapping("terms", v, _check.boolean),
    "ability_weighting": lambda v: _check.choice("ability_weighting", v, ABILITY_WEIGHTINGS),
    "aggregation": lambda v: _check.choice("aggregation", v, AGGREGATIONS),
    "clamp_conflict": lambda v: _check.boolean("clamp_conflict", v),
    "optimizer": _optimizer,
    "require_full_coverage": lambda v: _check.boolean("require_full_coverage", v),
    "must_include": lambda v: _check.strings("must_include", v),
    "must_exclude": lambda v: _check.strings("must_exclude", v),
    "certify": lambda v: _check.boolean("certify", v),
    "tie_break": _tie_break,
    "exclude_zero_gradient": lambda v: _check.boolean("exclude_zero_gradient", v),
    "relax": lambda v: _check.boolean("relax", v),
}


def select(
    profiles: Any,
    gradients: Any = None,
    k: int = 30,
    *,
    env_ids: Sequence[str] | None = None,
    abilities: Sequence[str] | None = None,
    weights: Mapping[str, float] | None = None,
    terms: Mapping[str, bool] | None = None,
    ability_weighting: str = "uniform",
    aggregation: str = "max",
    clamp_conflict: bool = True,
    optimizer: str | Mapping[str, Any] = "lazy",
    require_full_coverage: bool = False,
    must_include: Sequence[str] = (),
    must_exclude: Sequence[str] = (),
    certify: bool = True,
    tie_break: str | int | Mapping[str, int] = "lowest_index",
    exclude_zero_gradient: bool = False,
    relax: bool = False,
    config: Mapping[str, Any] | None = None,
) -> Selection:
    """Choose ``k`` environments with AES: greedy maximisation of ``weights["coverage"] *
    NewCoverage - weights["redundancy"] * Redundancy - weights["conflict"] * Conflict``.

    ``profiles``: an env x ability matrix (counts or weights; bool/int/float), a profile set
    dict (``envdist.profile_log(...)["profiles"]``), or a path to ``profiles.json`` or a
    ``.npy`` count matrix. ``gradients``: ``None``, an env x dim float matrix in the same row
    order, or a path to a gradient ``.safetensors`` file (rows matched by env id). Without
    gradients the conflict term is switched off.

    ``env_ids`` / ``abilities``: names of the matrix's rows / columns (unique; a duplicate is
    a ValueError naming both positions). Rows without ``env_ids`` are named ``env/0``,
    ``env/1``, ... and ``Selection.notes`` says so; profile sets and files carry their ids.

    Options (:func:`defaults` lists them with their defaults; errors name the option):

    - ``k`` (default 30): environments to select, from 1 to the number of rows.
    - ``weights`` (default ``{"coverage": 1.0, "redundancy": 0.25, "conflict": 2.0}``): the
      terms' weights, finite and >= 0; keys left out keep their defaults.
    - ``terms`` (default all ``True``; ``conflict`` ``False`` without gradients): which terms
      are on (the paper's ablations switch one off).
    - ``ability_weighting`` (default ``"uniform"``): how much an ability counts for coverage
      and redundancy: ``"uniform"`` (1 each), ``"frequency"`` (its share of the pool's count
      mass) or ``"rarity"`` (``1 + ln((1 + N) / (1 + envs covering it))``).
    - ``aggregation`` (default ``"max"``): how a candidate's pairwise conflicts with the chosen
      set combine: ``"max"``, ``"mean"`` or ``"sum"``.
    - ``clamp_conflict`` (default ``True``): clamp each pairwise penalty ``-cos`` at 0, so
      aligned gradients earn no bonus.
    - ``optimizer`` (default ``"lazy"``): ``"lazy"`` (priority queue of stale bounds, exact
      when gains cannot rise, else it runs naive and says so), ``"naive"`` (every candidate at
      every step), ``{"kind": "stochastic", "epsilon": e, "seed": s}`` (stochastic greedy,
      ``0 < e < 1``) or ``"exact"`` / ``{"kind": "exact", "max_nodes": 2_000_000,
      "max_seconds": 10.0}`` (the optimum by branch and bound, for at most 256 rows; a search
      stopped at a limit returns the best found and says so in ``notes``).
    - ``require_full_coverage`` (default ``False``): cover every ability some allowed
      environment covers (set-cover picks forced when the budget gets tight).
    - ``must_include`` (default none): env ids always selected (first, in pool order).
    - ``must_exclude`` (default none): env ids never selected.
    - ``certify`` (default ``True``): attach ``Selection.certificate`` (an upper bound on the
      optimum: "within X% of optimal").
    - ``tie_break`` (default ``"lowest_index"``): equal gains go to the lowest row; a seed
      (``123`` or ``{"seeded": 123}``) breaks ties in a seeded random order instead.
    - ``exclude_zero_gradient`` (default ``False``): never select an environment whose
      gradient is exactly zero (needs gradients).
    - ``relax`` (default ``False``): when the constraints make the selection infeasible, give
      up ``exclude_zero_gradient``, then ``require_full_coverage``, then both;
      ``Selection.relaxation`` says what was given up.
    - ``config``: a whole option dict instead (e.g. a selection file's ``config``, or
      :func:`defaults` modified); options given as keywords as well override it.

    The study's AES (``cargo xtask experiment``) is these options on its own profiles and
    gradients: ``require_full_coverage=True, tie_break=<master seed>,
    exclude_zero_gradient=True, relax=True``.
    """
    given = {
        "k": k, "weights": weights, "terms": terms, "ability_weighting": ability_weighting,
        "aggregation": aggregation, "clamp_conflict": clamp_conflict, "optimizer": optimizer,
        "require_full_coverage": require_full_coverage, "must_include": must_include,
        "must_exclude": must_exclude, "certify": certify, "tie_break": tie_break,
        "exclude_zero_gradient": exclude_zero_gradient, "relax": relax,
    }
    base = dict(_check.optional_mapping("config", config, "a dict of select options (see envdist.selection.defaults())"))
    unknown = sorted(set(base) - set(_OPTIONS), key=str)
    if unknown:
        raise ValueError(f"config: unknown options {', '.join(map(repr, unknown))}; expected some of {', '.join(_OPTIONS)}")
    sig = inspect.signature(select).parameters
    cfg: dict[str, Any] = {}
    for name, value in base.items():
        try:
            cfg[name] = _OPTIONS[name](value)
        except (TypeError, ValueError) as e:
            raise type(e)(f"config: {e}") from None
    for name, value in given.items():
        # A keyword at its default leaves a `config` value alone.
        if value is None or (name in cfg and _same(value, sig[name].default)):
            continue
        cfg[name] = _OPTIONS[name](value)
    cfg.setdefault("k", 30)
    if gradients is None:
        t = dict(cfg.get("terms", {}))
        t.setdefault("conflict", False)
        cfg["terms"] = t
    kw: dict[str, Any] = {}
    rows = None
    if isinstance(profiles, (str, os.PathLike)):
        path = _check.path("profiles", profiles)
        kw["counts_npy" if path.endswith(".npy") else "profiles_path"] = path
    elif isinstance(profiles, Mapping):
        try:
            kw["profiles_json"] = json.dumps(dict(profiles), allow_nan=False)
        except (TypeError, ValueError) as e:
            raise ValueError(f"profiles: expected a profile set dict (JSON-compatible), {e}") from None
    else:
        counts = _matrix("profiles", profiles, allow_bool=True)
        rows = counts.shape[0]
        kw["counts"] = counts
    if env_ids is not None:
        if "profiles_json" in kw or "profiles_path" in kw:
            raise ValueError("env_ids: a profile set names its environments itself; give env_ids with a matrix only")
        kw["env_ids"] = _names("env_ids", env_ids, rows)
    if abilities is not None:
        if "profiles_json" in kw or "profiles_path" in kw:
            raise ValueError("abilities: a profile set names its abilities itself; give abilities with a matrix only")
        kw["abilities"] = _names("abilities", abilities, None if rows is None else kw["counts"].shape[1])
    if isinstance(gradients, (str, os.PathLike)):
        kw["gradients_path"] = _check.path("gradients", gradients)
    elif gradients is not None:
        kw["gradients"] = _matrix("gradients", gradients, allow_bool=False)
    out = json.loads(_envdist.select_json(json.dumps(cfg), **kw))
    raw = out["selection"]
    steps = raw["steps"]
    trace: dict[str, np.ndarray] = {
        "env": np.asarray([s["env"] for s in steps], dtype=np.int64),
        "coverage": np.asarray([s["coverage"] for s in steps], dtype=np.float32),
        "redundancy": np.asarray([s["redundancy"] for s in steps], dtype=np.float32),
        "conflict": np.asarray([s["conflict"] for s in steps], dtype=np.float32),
        "reason": np.asarray([s["reason"] for s in steps]),
    }
    notes = list(raw["notes"])
    if env_ids is None and ("counts" in kw or "counts_npy" in kw):
        notes.append(
            "env_ids not given: the rows are named env/0, env/1, ... (pass env_ids=[...] to name them)"
        )
    cert = raw.get("certificate")
    return Selection(
        ranking=np.asarray(raw["ranking"], dtype=np.int64),
        env_ids=list(raw["env_ids"]),
        gains=np.asarray([s["gain"] for s in steps], dtype=np.float32),
        trace=trace,
        objective=float(raw["objective"]),
        covered=raw["covered"],
        coverable=raw["coverable"],
        abilities=raw["abilities"],
        uncovered=list(raw["uncovered"]),
        method=raw["method"],
        notes=notes,
        relaxation=raw.get("relaxation"),
        certificate=None if cert is None else Certificate(
            **cert, explanation=out["certificate_explanation"], summary=out["certificate_summary"]
        ),
        raw=raw,
    )


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - arrays and odd values are simply "not the default"
        return False


__all__ = [
    "ABILITY_WEIGHTINGS",
    "AGGREGATIONS",
    "OPTIMIZERS",
    "TERMS",
    "Certificate",
    "Selection",
    "defaults",
    "select",
]
