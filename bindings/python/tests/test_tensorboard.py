"""TensorBoard reads the event files the trainer writes (`xtask train` and every study arm, one
file per run directory beside train_log.jsonl): its own EventAccumulator gives back every number
of each update's log line, at the update's env steps, under the tags of envdist_trainer's
`UpdateStats::tensorboard_scalars`.

The extension does not train (the trainer, the one crate that knows burn, is not in it), and no
test here runs cargo, so the run read is a copy of one `cargo xtask train --envs maze/classic
--sampler h4 --steps 4096 --preset tiny --out DIR` in tests/data/tensorboard. xtask's test
`the_python_tensorboard_fixture_is_what_the_trainer_writes` checks that the copy is, byte for
byte, what the trainer writes for that log today (and says how to regenerate it)."""

import json
import pathlib

from tier import require_integration

require_integration()

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from tensorboard.backend.event_processing import event_accumulator  # noqa: E402

pytestmark = pytest.mark.integration

RUN = pathlib.Path(__file__).parent / "data" / "tensorboard"


def expected_scalars(line):
    """The scalars of one train_log.jsonl line, {tag: float32}, as the trainer's table says."""
    out = {}

    def put(tag, value):
        if value is not None:
            out[tag] = np.float32(value)

    put("train/success_rate", line["success_rate"])
    put("train/mean_return", line["mean_return"])
    put("train/episodes", line["episodes"])
    put("train/update", line["update"])
    put("train/value_only", float(line["value_only"]))
    put("loss/policy", line["policy_loss"])
    put("loss/value", line["value_loss"])
    put("loss/entropy", line["entropy"])
    put("policy/approx_kl", line["approx_kl"])
    put("policy/kl_to_start", line["kl_to_start"])
    put("policy/clip_fraction", line["clip_fraction"])
    put("optim/grad_norm", line["grad_norm"])
    put("optim/lr", line["lr"])
    put("curriculum/mean_harness_level", line["mean_harness_level"])
    put("curriculum/mean_scale", line["mean_scale"])
    for env, (episodes, successes) in line["env_outcomes"].items():
        put(f"env/{env}/episodes", episodes)
        if episodes:
            put(f"env/{env}/success_rate", np.float32(successes) / np.float32(episodes))
    for env, (level, scale) in line["env_level_scale"].items():
        put(f"env/{env}/harness_level", level)
        put(f"env/{env}/scale", scale)
    put("perf/env_steps_per_second", line["env_steps_per_second"])
    put("perf/update_seconds", line["seconds"])
    put("perf/rollout_seconds", line["rollout_seconds"])
    put("perf/rollout_infer_seconds", line["rollout_infer_seconds"])
    put("perf/learn_seconds", line["learn_seconds"])
    return out


def test_event_accumulator_reads_every_number_of_the_training_log():
    files = sorted(RUN.glob("events.out.tfevents.*"))
    assert len(files) == 1, files
    log = [json.loads(line) for line in (RUN / "train_log.jsonl").read_text().splitlines()]
    assert len(log) == 32  # 4096 env steps of the tiny preset, 128 per update

    # The directory, as `tensorboard --logdir` gets it (train_log.jsonl beside is not read).
    acc = event_accumulator.EventAccumulator(str(RUN), size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    assert acc.file_version == 2.0

    expected = {}  # tag -> [(step, value)]
    for line in log:
        for tag, value in expected_scalars(line).items():
            expected.setdefault(tag, []).append((line["env_steps"], value))
    assert sorted(acc.Tags()["scalars"]) == sorted(expected)
    # What an H4 run on one env must show: the curriculum tags at H4, scale 1 (maze's smallest).
    assert {"loss/policy", "policy/approx_kl", "curriculum/mean_harness_level",
            "env/maze/classic/scale"} <= set(expected)
    assert all(v == 4.0 for _, v in expected["curriculum/mean_harness_level"])
    assert all(v == 1.0 for _, v in expected["env/maze/classic/scale"])

    for tag, points in expected.items():
        got = acc.Scalars(tag)
        assert [e.step for e in got] == [s for s, _ in points], tag
        # simple_value is a float32: the log's f32 exactly.
        assert [np.float32(e.value) for e in got] == [v for _, v in points], tag
        assert all(e.wall_time > 1.6e9 for e in got), tag
