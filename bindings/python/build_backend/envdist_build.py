"""The PEP 517 build backend of the envdist wheel: maturin's, with one change. Without Rust
(no ``cargo`` on PATH) maturin would download rustup and a Rust toolchain (about 1.6 GB) into a
temporary directory and say so only under ``pip install -v``; this backend stops at once with
one line that says what is missing and how to get it. ``ENVDIST_INSTALL_RUST=1`` lets maturin
do its download instead."""

from __future__ import annotations

import os
import shutil
import sys

import maturin
from maturin import (  # noqa: F401 - the hooks that need no Rust check pass through
    build_sdist,
    get_requires_for_build_sdist,
)

#: The one line a build without Rust ends with.
NO_RUST = (
    "envdist: building the envdist wheel needs Rust (cargo on PATH, Rust 1.92 or newer), which was "
    "not found: install it from https://rustup.rs (or your system's package manager) and run "
    "pip install again; ENVDIST_INSTALL_RUST=1 lets maturin download a temporary toolchain "
    "(about 1.6 GB) instead"
)


def _require_rust() -> None:
    if shutil.which("cargo") is None and os.environ.get("ENVDIST_INSTALL_RUST") != "1":
        print(NO_RUST, file=sys.stderr)
        raise SystemExit(1)


def get_requires_for_build_wheel(config_settings=None):
    _require_rust()
    return maturin.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_editable(config_settings=None):
    _require_rust()
    return maturin.get_requires_for_build_editable(config_settings)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _require_rust()
    return maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _require_rust()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _require_rust()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel
