"""AES selection on numpy arrays or on the files the CLI reads."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _envdist


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
    method: str
    notes: list[str]
    #: What ``relax=True`` gave up to make an infeasible selection feasible (``gave_up``:
    #: ``zero_gradient_kept``, ``full_coverage`` or ``both``, and the ``reason``), or None.
    relaxation: dict | None
    #: The whole selection as the CLI writes it (JSON-compatible).
    raw: dict = field(repr=False)


def _matrix(name: str, a: Any, allow_bool: bool) -> np.ndarray:
    arr = np.asarray(a)
    kinds = "biuf" if allow_bool else "iuf"
    if arr.dtype.kind not in kinds:
        raise TypeError(
            f"{name}: expected a numeric array ({'bool, ' if allow_bool else ''}int or float), found dtype {arr.dtype}"
        )
    if arr.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array (environments x {'abilities' if allow_bool else 'dims'}), found shape {arr.shape}")
    return np.ascontiguousarray(arr, dtype=np.float32)


def select(
    profiles: Any,
    gradients: Any = None,
    k: int = 30,
    *,
    env_ids: Sequence[str] | None = None,
    abilities: Sequence[str] | None = None,
    config: Mapping[str, Any] | None = None,
    **options: Any,
) -> Selection:
    """Choose ``k`` environments with AES (coverage - redundancy - conflict, greedy).

    ``profiles``: an env x ability matrix (counts or weights; bool/int/float), a profile set
    dict (``envdist.profile_log(...)["profiles"]``), or a path to ``profiles.json`` or a
    ``.npy`` count matrix. ``gradients``: ``None``, an env x dim float matrix in the same row
    order, or a path to a gradient ``.safetensors`` file (rows matched by env id). Without
    gradients the conflict term is switched off. ``config`` and keyword options are
    ``SelectConfig`` fields (``weights``, ``terms``, ``aggregation``, ``optimizer``,
    ``must_include``, ...); errors name the field.

    The study's AES (``cargo xtask experiment``) is these options on its own profiles and
    gradients: ``require_full_coverage=True, tie_break={"seeded": <master seed>},
    exclude_zero_gradient=True, relax=True`` (ties broken in a seeded order, environments
    whose gradient is exactly zero left out, each constraint given up only where it makes the
    selection infeasible; ``Selection.relaxation`` says what was).
    """
    cfg = dict(config or {})
    cfg.update(options)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k: expected an int, found {type(k).__name__}")
    cfg["k"] = int(k)
    if gradients is None:
        terms = dict(cfg.get("terms", {}))
        terms.setdefault("conflict", False)
        cfg["terms"] = terms
    kw: dict[str, Any] = {}
    if isinstance(profiles, (str, os.PathLike)):
        path = os.fspath(profiles)
        kw["counts_npy" if path.endswith(".npy") else "profiles_path"] = path
    elif isinstance(profiles, Mapping):
        kw["profiles_json"] = json.dumps(dict(profiles))
    else:
        counts = _matrix("profiles", profiles, allow_bool=True)
        kw["counts"] = counts
    if env_ids is not None:
        kw["env_ids"] = [str(e) for e in env_ids]
    if abilities is not None:
        kw["abilities"] = [str(a) for a in abilities]
    if isinstance(gradients, (str, os.PathLike)):
        kw["gradients_path"] = os.fspath(gradients)
    elif gradients is not None:
        g = _matrix("gradients", gradients, allow_bool=False)
        kw["gradients"] = g
    raw = json.loads(_envdist.select_json(json.dumps(cfg), **kw))
    steps = raw["steps"]
    trace = {
        "env": np.asarray([s["env"] for s in steps], dtype=np.int64),
        "coverage": np.asarray([s["coverage"] for s in steps], dtype=np.float32),
        "redundancy": np.asarray([s["redundancy"] for s in steps], dtype=np.float32),
        "conflict": np.asarray([s["conflict"] for s in steps], dtype=np.float32),
        "reason": np.asarray([s["reason"] for s in steps]),
    }
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
        notes=list(raw["notes"]),
        relaxation=raw.get("relaxation"),
        raw=raw,
    )


__all__ = ["Selection", "select"]
