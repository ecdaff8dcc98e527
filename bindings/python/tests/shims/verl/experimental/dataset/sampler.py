# Reproduced from verl/experimental/dataset/sampler.py at verl commit
# b178a3cd56f58b2d502255daba591e92833930a7 (0.8.0.dev, 2026-01-29), Apache-2.0, Copyright 2025
# Amazon.com Inc and/or its affiliates. Only the imports differ: omegaconf's DictConfig is a
# plain type hint here, and torch's Sampler is used when torch is installed.
from abc import abstractmethod
from collections.abc import Sized
from typing import Any as DictConfig

try:
    from torch.utils.data import Sampler
except ImportError:  # torch is optional for the shim
    from typing import Generic, TypeVar

    T = TypeVar("T")

    class Sampler(Generic[T]):
        pass

from verl import DataProto


class AbstractSampler(Sampler[int]):
    """Abstract interface for custom samplers."""

    @abstractmethod
    def __init__(
        self,
        data_source: Sized,
        data_config: DictConfig,
    ):
        pass


class AbstractCurriculumSampler(AbstractSampler):
    """Experimental interface for curriculum learning samplers."""

    @abstractmethod
    def update(self, batch: DataProto) -> None:
        pass
