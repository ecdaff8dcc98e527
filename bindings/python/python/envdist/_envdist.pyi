"""Type stubs of the compiled extension module (bindings/python/src, built by maturin).

Every public name of the module has a stub here and every stub a name there, with the same
parameters (tests/test_typing.py checks both against the built module). Structured values cross
as JSON text, bulk data as numpy arrays; the Python API over them is the rest of the package.
"""

from os import PathLike

import numpy as np
import numpy.typing as npt

__version__: str
NUM_ACTIONS: int
MIN_CANVAS: int
MAX_CANVAS: int

#: A ticket as the samplers speak it: ``(env_id, harness, scale, seed)``.
_Task = tuple[str, str, int, int]
_Frame = npt.NDArray[np.uint8]
_HarnessText = tuple[str | None, str | None, str | None, str | None]
_Path = str | PathLike[str]

class Env:
    """One environment of the suite (used by ``envdist.EnvdistEnv``)."""

    def __new__(
        cls, env_id: str, harness: str = "H4", scale: int | None = None, canvas: int = 64
    ) -> Env: ...
    def spec_json(self) -> str: ...
    def configure(self, harness: str | None = None, scale: int | None = None) -> None: ...
    def reset(self, seed: int | None = None) -> tuple[_Frame, int, int]: ...
    def step(self, action: int) -> tuple[_Frame, float, bool, bool, bool, list[str], int]: ...
    def harness_text(self) -> _HarnessText: ...
    def episode(self) -> tuple[str, int, int, int, int]: ...
    def oracle_action(self) -> int | None: ...
    def parse_action(self, text: str) -> int: ...
    def answers(self) -> list[tuple[int, list[str]]]: ...

class VectorEnv:
    """A batch of environments (used by ``envdist.vector.EnvdistVectorEnv``): results are
    written into arrays the caller allocated once."""

    def __new__(
        cls,
        env_ids: list[str],
        harness: list[str],
        scales: list[int | None],
        canvas: int = 64,
    ) -> VectorEnv: ...
    def __len__(self) -> int: ...
    def reset(
        self,
        seeds: list[int | None],
        frames: npt.NDArray[np.uint8],
        legal: npt.NDArray[np.uint32],
    ) -> None: ...
    def step(
        self,
        actions: npt.NDArray[np.int64],
        frames: npt.NDArray[np.uint8],
        rewards: npt.NDArray[np.float64],
        terminated: npt.NDArray[np.bool_],
        truncated: npt.NDArray[np.bool_],
        success: npt.NDArray[np.bool_],
        legal: npt.NDArray[np.uint32],
    ) -> None: ...
    def episodes(self) -> list[tuple[str, str, int, int]]: ...
    def harness_text(self, i: int) -> _HarnessText: ...
    def canvas(self) -> int: ...
    def parse_actions(self, texts: list[str]) -> list[int]: ...

class Sampler:
    """A curriculum sampler of any kind over environments of the suite (used by
    ``envdist.Curriculum``)."""

    def __new__(
        cls,
        kind: str,
        env_ids: list[str],
        config_json: str | None = None,
        seed: int = 0,
        weights: list[float] | None = None,
    ) -> Sampler: ...
    @property
    def kind(self) -> str: ...
    @property
    def env_ids(self) -> list[str]: ...
    @property
    def samples(self) -> int: ...
    @property
    def updates(self) -> int: ...
    def sample(self, k: int) -> list[_Task]: ...
    def update(
        self, tasks: list[_Task], successes: list[float], steps: list[int] | None = None
    ) -> None: ...
    def trains_on(self, tasks: list[_Task]) -> list[bool]: ...
    def state_json(self) -> str: ...
    def load_state_json(self, text: str) -> None: ...
    def probabilities_json(self) -> str: ...
    def snapshot_json(self) -> str: ...
    def status_json(self) -> str: ...
    def config_json(self) -> str: ...

def specs_json() -> str: ...
def parse_action(text: str) -> int: ...
def action_names() -> list[str]: ...
def sampler_kinds() -> list[str]: ...
def default_config_json(kind: str) -> str: ...
def select_json(
    config_json: str,
    counts: npt.NDArray[np.float32] | None = None,
    env_ids: list[str] | None = None,
    abilities: list[str] | None = None,
    profiles_json: str | None = None,
    profiles_path: _Path | None = None,
    counts_npy: _Path | None = None,
    gradients: npt.NDArray[np.float32] | None = None,
    gradients_path: _Path | None = None,
) -> str: ...
def select_defaults_json() -> str: ...
def profile_log_json(
    path: _Path,
    replay: bool = True,
    ignore_tags: list[str] = [],
    threshold: float | None = None,
    cooccurrence_weight: float | None = None,
    out: _Path | None = None,
) -> str: ...
def bench_native(
    env_ids: list[str],
    num_envs: int,
    steps: int,
    harness: str = "H4",
    canvas: int = 64,
    seed: int = 0,
) -> float: ...
