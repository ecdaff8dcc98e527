"""A minimal stand-in for the `verl` package (verl itself needs torch, ray, vLLM...): only what
envdist.adapters.verl and its test touch, reproduced from verl at commit
b178a3cd56f58b2d502255daba591e92833930a7 (version 0.8.0.dev, 2026-01-29)."""

from dataclasses import dataclass, field


@dataclass
class DataProto:
    """verl.protocol.DataProto's fields: `batch` (a TensorDict), `non_tensor_batch` (dict of
    numpy object arrays), `meta_info`."""

    batch: dict = field(default_factory=dict)
    non_tensor_batch: dict = field(default_factory=dict)
    meta_info: dict = field(default_factory=dict)
