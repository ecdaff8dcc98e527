"""What the adapter tests share: two environments and, per sampler kind, a configuration with
small windows so that every kind moves (and PLR replays) within a few dozen episodes."""

ENVS = ["count-objects/classic", "maze/classic"]
CONFIGS = {
    "hdc": {"min_episodes": 2, "competence_threshold": 0.5},
    "pass_rate": {"group_size": 2},
    "learnability": {"top_k": 2},
    "learning_progress": {"update_interval": 8},
    "sec": {"batch_episodes": 8, "group_size": 2},
    "ladder": {"check_episodes": 4, "window": 2},
    "plr": {"buffer_size": 4, "rho": 0.25},
}
