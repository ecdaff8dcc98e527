"""What the sampler tests share: the sampler kinds and their default configurations as the
extension's registry gives them (``envdist.sampler_kinds()``, ``envdist.default_config()``), and
configurations tuned per kind for tests, checked against that registry so that a kind or a field
it does not know is an error here rather than a test that quietly covers less."""

import envdist

#: Every sampler kind, in the registry's order (HDC first).
KINDS = envdist.sampler_kinds()


def configs(fields: dict[str, dict]) -> dict[str, dict]:
    """Per kind of the registry, the config fields `fields` gives it (none: its defaults).
    A key that is not a kind, or a field that is not in the kind's default config, fails."""
    unknown = set(fields) - set(KINDS)
    assert not unknown, f"not sampler kinds: {sorted(unknown)}"
    for kind, given in fields.items():
        stray = set(given) - set(envdist.default_config(kind))
        assert not stray, f"{kind}: not fields of its config: {sorted(stray)}"
    return {kind: dict(fields.get(kind, {})) for kind in KINDS}


def changed_field(kind: str, config: dict) -> tuple[str, int]:
    """One field of `kind` to change, and a valid value other than `config`'s (or the
    default's): its first integer field, one more."""
    defaults = {**envdist.default_config(kind), **config}
    field = next(f for f, v in defaults.items() if type(v) is int)
    return field, defaults[field] + 1


#: The adapter tests' environments and, per kind, small windows so that every kind moves (and
#: PLR replays) within a few dozen episodes.
ENVS = ["count-objects/classic", "maze/classic"]
CONFIGS = configs({
    "hdc": {"min_episodes": 2, "competence_threshold": 0.5},
    "pass_rate": {"group_size": 2},
    "learnability": {"top_k": 2},
    "learning_progress": {"update_interval": 8},
    "sec": {"batch_episodes": 8, "group_size": 2},
    "ladder": {"check_episodes": 4, "window": 2},
    "plr": {"buffer_size": 4, "rho": 0.25},
})
