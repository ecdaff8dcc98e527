"""Thin adapters to trainers' own interfaces. Each module imports its trainer's package, so
import only the one you use:

- ``envdist.adapters.verl``: ``EnvdistCurriculumSampler``, a verl ``AbstractCurriculumSampler``
  (``data.sampler.class_path=pkg://envdist.adapters.verl``,
  ``data.sampler.class_name=EnvdistCurriculumSampler``).
- ``envdist.adapters.syllabus``: ``EnvdistCurriculum``, a Syllabus ``Curriculum``, and
  ``EnvdistTaskWrapper``, the env side that plays the tickets it hands out.
- ``envdist.adapters.verl_reward``: ``compute_score``, verl's custom reward function for the
  rows of ``envdist.adapters.verl.dataset_rows``: it replays the row's ticket and plays the reply
  (a single-turn env's answer in words or an action name). Needs no trainer package.
- ``envdist.adapters.vagen``: ``VagenEnv``, a ``reset(seed) / step(action_str)`` text+image env
  as VAGEN / SkyRL / verl agent loops drive one.
"""
