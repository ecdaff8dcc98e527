"""Argument checks for the public entries, so that a wrong argument is refused in the user's
words before it reaches the extension (where pyo3 would say "'int' object is not an instance of
'str'" or raise an OverflowError): a ``TypeError`` for a wrong type, a ``ValueError`` for a value
out of range, each naming the argument, what it accepts (ranges inclusive) and what it got, in
the ``"name: expected ..., found ..."`` form the Rust side uses."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

import numpy as np

#: The largest unsigned 32-bit / 64-bit values (scales, seeds in Rust).
U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1


def _found(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _type_name(value: Any) -> str:
    return type(value).__name__


def is_int(value: Any) -> TypeGuard[int | np.integer | np.ndarray]:
    """An int or a numpy integer (or a 0-d integer array), not a bool."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (int, np.integer)):
        return True
    return isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu"


def integer(name: str, value: Any, lo: int, hi: int | None = None, what: str = "an integer") -> int:
    """``value`` as an int in ``lo..=hi`` (``hi`` None: no upper end)."""
    if not is_int(value):
        raise TypeError(f"{name}: expected {what}, found {_type_name(value)} {_found(value)}")
    v = int(value)
    if v < lo or (hi is not None and v > hi):
        span = f"at least {lo}" if hi is None else f"from {lo} to {hi}"
        raise ValueError(f"{name}: expected {what} {span}, found {v}")
    return v


def optional_integer(name: str, value: Any, lo: int, hi: int | None = None, what: str = "an integer") -> int | None:
    return None if value is None else integer(name, value, lo, hi, f"None or {what}")


def seed(name: str, value: Any) -> int:
    """A seed: an int from 0 to 2**64 - 1."""
    return integer(name, value, 0, U64_MAX, "an integer seed")


def number(name: str, value: Any, lo: float | None = None, hi: float | None = None) -> float:
    """``value`` as a finite float in ``lo..=hi`` (either end None: open)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}: expected a number, found {_type_name(value)} {_found(value)}")
    v = float(value)
    if not math.isfinite(v) or (lo is not None and v < lo) or (hi is not None and v > hi):
        span = (
            "" if lo is None and hi is None else
            f" from {lo:g} to {hi:g}" if lo is not None and hi is not None else
            f" of at least {lo:g}" if lo is not None else f" of at most {hi:g}"
        )
        raise ValueError(f"{name}: expected a finite number{span}, found {value!r}")
    return v


def optional_number(name: str, value: Any, lo: float | None = None, hi: float | None = None) -> float | None:
    return None if value is None else number(name, value, lo, hi)


def boolean(name: str, value: Any) -> bool:
    """``value`` as a bool (Python's or numpy's)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected True or False, found {_type_name(value)} {_found(value)}")
    return bool(value)


def string(name: str, value: Any, what: str = "a str") -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected {what}, found {_type_name(value)} {_found(value)}")
    return value


def env_id(name: str, value: Any) -> str:
    """An environment id (checked for existence by the extension, which suggests the nearest)."""
    return string(name, value, "an environment id (a str such as 'maze/classic')")


def env_ids(name: str, value: Any) -> list[str]:
    """One environment id or a non-empty sequence of them."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Sequence) and not isinstance(value, np.ndarray):
        raise TypeError(
            f"{name}: expected an environment id or a list of them (such as ['maze/classic']), "
            f"found {_type_name(value)} {_found(value)}"
        )
    ids = list(value)
    if not ids:
        raise ValueError(f"{name}: expected at least one environment id, found none")
    for i, e in enumerate(ids):
        env_id(f"{name}[{i}]", e)
    return ids


def strings(name: str, value: Any) -> list[str]:
    """A sequence of strs (not one str: that would be read as its characters)."""
    if isinstance(value, str) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{name}: expected a list of str, found {_type_name(value)} {_found(value)}")
    out = list(value)
    for i, s in enumerate(out):
        string(f"{name}[{i}]", s)
    return out


def choice(name: str, value: Any, options: Sequence[Any]) -> Any:
    """One of ``options`` (compared with ==)."""
    shown = ", ".join(repr(o) for o in options)
    if not isinstance(value, (str, type(None))) and not any(type(value) is type(o) for o in options):
        raise TypeError(f"{name}: expected one of {shown}, found {_type_name(value)} {_found(value)}")
    if value not in options:
        raise ValueError(f"{name}: expected one of {shown}, found {_found(value)}")
    return value


def mapping(name: str, value: Any, what: str = "a dict") -> Mapping:
    if not isinstance(value, Mapping):
        raise TypeError(f"{name}: expected {what}, found {_type_name(value)} {_found(value)}")
    return value


def optional_mapping(name: str, value: Any, what: str = "a dict") -> Mapping:
    return {} if value is None else mapping(name, value, f"None or {what}")


def path(name: str, value: Any, must_exist: bool = True) -> str:
    """A file path (str or os.PathLike); ``FileNotFoundError`` naming the argument when it must
    exist and does not."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name}: expected a file path (str or pathlib.Path), found {_type_name(value)} {_found(value)}")
    p = os.fspath(value)
    if not isinstance(p, str):
        raise TypeError(f"{name}: expected a file path as text, found {_type_name(p)}")
    if must_exist and os.path.isdir(p):
        raise ValueError(f"{name}: expected a file, found the directory {p}")
    if must_exist and not os.path.exists(p):
        raise FileNotFoundError(f"{name}: {p}: no such file")
    return p


#: float32's largest finite value: the Rust side reads most real numbers as float32.
FLOAT32_MAX = float(np.finfo(np.float32).max)


def json_values(name: str, value: Any) -> None:
    """Refuse, naming the key path, what JSON cannot carry to the extension or what would
    arrive changed: a non-finite float, a float beyond float32's range (it would arrive as
    inf), a value of no JSON type."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"{name}: expected str keys, found {_type_name(k)} {_found(k)}")
            json_values(f"{name}[{k!r}]", v)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            json_values(f"{name}[{i}]", v)
    elif isinstance(value, (bool, np.bool_, str, type(None))) or is_int(value):
        return
    elif isinstance(value, (float, np.floating)):
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"{name}: expected a finite number, found {v!r}")
        if abs(v) > FLOAT32_MAX:
            raise ValueError(f"{name}: {v!r} is out of float32's range (|x| <= {FLOAT32_MAX:.7g}), which the extension reads")
    else:
        raise TypeError(
            f"{name}: expected a JSON value (a number, str, bool, None, list or dict), found {_type_name(value)} {_found(value)}"
        )
