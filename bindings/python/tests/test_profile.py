"""envdist.profile_log on a trainer's chat log, into profiles that envdist.select takes."""

import base64
import json

import pytest

import envdist
from envdist.adapters.vagen import VagenEnv

ENVS = ["maze/classic", "maze/mirrored", "count-objects/classic", "key-door/classic"]


def dump_chat_log(path, episodes_per_env=3):
    """Play tickets with the solver and dump them as a VLM trainer does: one JSON line per
    episode, OpenAI-style messages with image parts, keyed by env id and episode."""
    hdc = envdist.HDC(ENVS, seed=0)
    with open(path, "w") as f:
        for k, t in enumerate(hdc.sample(episodes_per_env * len(ENVS))):
            env = VagenEnv(ticket=t)
            obs, info = env.reset()
            messages = [{"role": "system", "content": env.system_prompt()}]
            done = False
            while not done:
                messages.append({"role": "user", "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(b"png").decode()}},
                    {"type": "text", "text": obs["obs_str"]},
                ]})
                action = envdist.ACTION_NAMES[env.env.oracle_action()]
                reply = f"<think>the solver says {action}</think><answer>{action}</answer>"
                messages.append({"role": "assistant", "content": reply})
                obs, reward, done, info = env.step(reply)
            f.write(json.dumps({"env_id": t.env_id, "episode": k, "seed": t.seed, "harness": t.harness,
                                "scale": t.scale, "success": info["success"], "messages": messages}) + "\n")


def test_chat_log_to_profiles_to_selection(tmp_path):
    log = tmp_path / "rollouts.jsonl"
    dump_chat_log(log)
    got = envdist.profile_log(log, out=tmp_path / "out")
    assert got["trajectories"] == 12 and got["unreadable_turns"] == 0
    assert got["replay"]["replayed"] == 12 and got["replay"]["ended_early"] == 0
    envs = [p["env"] for p in got["profiles"]["profiles"]]
    assert sorted(envs) == sorted(ENVS)
    assert (tmp_path / "out" / "profiles.json").exists()
    s = envdist.select(got["profiles"], k=2)
    assert len(s.env_ids) == 2 and set(s.env_ids) <= set(ENVS)
    # The written file is what the CLI's select reads.
    assert envdist.select(str(tmp_path / "out" / "profiles.json"), k=2).env_ids == s.env_ids


def test_unusable_logs_are_errors_naming_the_file(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(ValueError, match="empty.jsonl.*at least one trajectory"):
        envdist.profile_log(empty)
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text(json.dumps({"env_id": "maze/classic", "episode": 1, "messages": [
        {"role": "assistant", "content": "I am not sure"}]}) + "\n")
    with pytest.raises(ValueError, match="garbage.jsonl.*chat episodes without an assistant turn"):
        envdist.profile_log(garbage)
    untagged = tmp_path / "untagged.jsonl"
    env = envdist.make("maze/classic")
    _, info = env.reset(seed=1)
    move = envdist.ACTION_NAMES[env.oracle_action()]
    untagged.write_text(json.dumps({"env_id": "maze/classic", "episode": 1, "seed": 1, "scale": info["scale"],
                                    "harness": "H4", "messages": [{"role": "assistant", "content": move}]}) + "\n")
    with pytest.raises(ValueError, match="untagged.jsonl: no usable trajectory"):
        envdist.profile_log(untagged, replay=False)
    assert envdist.profile_log(untagged)["trajectories"] == 1
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{\"env_id\": \"maze/classic\", \"episode\": 1, \"messages\": 3}\n")
    with pytest.raises(ValueError, match="broken.jsonl line 1.*messages"):
        envdist.profile_log(broken)
    with pytest.raises(FileNotFoundError, match="nothing.jsonl"):
        envdist.profile_log(tmp_path / "nothing.jsonl")


def test_lines_missing_a_field_name_it_as_the_log_writes_it(tmp_path):
    no_messages = tmp_path / "no_messages.jsonl"
    no_messages.write_text(json.dumps({"env_id": "maze/classic", "episode": 1, "seed": 3}) + "\n")
    with pytest.raises(ValueError, match=r"no_messages.jsonl line 1: field `messages`: missing: expected a chat episode "
                                         r"line \(with `messages`\).*its fields: env_id, episode, seed"):
        envdist.profile_log(no_messages)
    no_env = tmp_path / "no_env.jsonl"
    no_env.write_text("\n" + json.dumps({"episode": 1, "messages": [{"role": "assistant", "content": "left"}]}) + "\n")
    with pytest.raises(ValueError, match=r"no_env.jsonl line 2: field `env_id`: missing: a chat episode line needs"):
        envdist.profile_log(no_env)


def test_unknown_env_ids_are_listed_with_the_nearest_known_ones(tmp_path):
    env = envdist.make("maze/classic")
    _, info = env.reset(seed=1)
    move = envdist.ACTION_NAMES[env.oracle_action()]
    line = {"env_id": "maze/clasic", "episode": 1, "seed": 1, "scale": info["scale"], "harness": "H4",
            "messages": [{"role": "assistant", "content": move}]}
    only = tmp_path / "misspelt.jsonl"
    only.write_text(json.dumps(line) + "\n")
    with pytest.raises(ValueError, match=r'"maze/clasic" \(1 trajectories; nearest: maze/classic'):
        envdist.profile_log(only)
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(json.dumps(line) + "\n" + json.dumps({**line, "env_id": "maze/classic", "episode": 2}) + "\n")
    with pytest.warns(UserWarning, match=r"'maze/clasic' \(1 trajectories; nearest: maze/classic"):
        got = envdist.profile_log(mixed)
    assert got["replay"]["unknown_env_ids"]["maze/clasic"]["nearest"][0] == "maze/classic"
    assert got["replay"]["replayed"] == 1
