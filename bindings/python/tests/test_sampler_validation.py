"""What a sampler could not have produced is refused, for every kind, with the checks of the
curriculum crate (shared with the CLI and the study): outcomes of tickets it could not have
issued or with a non-finite success (``update``), and saved states whose values cannot occur
together (``load_state_dict``). A refusal is a ValueError naming the ticket or the field, and
changes nothing."""

import copy
import json

import pytest

import envdist
from envdist import Curriculum

ENVS = ["maze/classic", "count-objects/classic"]
KINDS = envdist.sampler_kinds()


def played(kind, rounds=40):
    """A sampler of `kind` after a few batches, so that its state holds counts and estimates."""
    cur = Curriculum(kind, ENVS, seed=3)
    for _ in range(rounds):
        tickets = cur.sample(4)
        cur.update(tickets, [t.seed % 3 != 0 for t in tickets])
    return cur


@pytest.mark.parametrize("kind", KINDS)
def test_a_scale_out_of_range_is_refused_naming_the_ticket_and_the_range(kind):
    cur = played(kind)
    scale = envdist.spec("maze/classic")["scale"]
    before = cur.state_dict()
    with pytest.raises(ValueError) as e:
        cur.update(["maze/classic|H0|999|1"], [True])
    message = str(e.value)
    assert "maze/classic|H0|999|1" in message, message
    assert f"field `scale`: expected {scale['min']}..={scale['max']}" in message, message
    assert "found 999" in message, message
    assert cur.state_dict() == before


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_a_non_finite_success_is_refused(kind, bad):
    cur = played(kind)
    ticket = cur.sample(1)[0]
    before = cur.state_dict()
    with pytest.raises(ValueError) as e:
        cur.update([ticket], [bad])
    message = str(e.value)
    assert "successes[0]" in message and ticket.ticket_id in message, message
    assert "finite" in message, message
    assert cur.state_dict() == before


@pytest.mark.parametrize("kind", KINDS)
def test_one_bad_ticket_in_a_batch_records_nothing(kind):
    cur = played(kind)
    good = cur.sample(3)
    before = cur.state_dict()
    with pytest.raises(ValueError) as e:
        cur.update([*good, "maze/classic|H4|999|5"], [True, False, True, True])
    assert "ticket_ids[3]" in str(e.value), str(e.value)
    assert cur.state_dict() == before
    # The good ones alone are taken.
    cur.update(good, [True, False, True])
    assert cur.state_dict() != before


def test_a_level_the_sampler_never_draws_is_refused():
    # The rivals that do not model the harness draw H4 alone (their default levels).
    cur = played("plr")
    before = cur.state_dict()
    with pytest.raises(ValueError) as e:
        cur.update(["maze/classic|H0|1|1"], [True])
    message = str(e.value)
    assert "maze/classic|H0|1|1" in message and "field `harness`" in message, message
    assert "(H4)" in message and "found H0" in message, message
    assert cur.state_dict() == before
    # HDC starts at H0 and can be told of any level from its start on.
    hdc = played("hdc")
    hdc.update(["maze/classic|H3|1|1"], [True])


@pytest.mark.parametrize("kind", KINDS)
def test_the_all_zero_random_state_is_refused(kind):
    # xoshiro256** never leaves the all-zero state: a sampler restored there would hand out
    # the same ticket for ever.
    cur = played(kind)
    state = cur.state_dict()
    bad = copy.deepcopy(state)
    bad["rng"]["s"] = [0, 0, 0, 0]
    fresh = Curriculum(kind, ENVS, seed=9)
    before = fresh.state_dict()
    with pytest.raises(ValueError) as e:
        fresh.load_state_dict(bad)
    message = str(e.value)
    assert "`rng`" in message and "all-zero" in message, message
    assert fresh.state_dict() == before
    fresh.load_state_dict(state)
    assert fresh.state_dict() == state


@pytest.mark.parametrize("kind", KINDS)
def test_counters_that_disagree_are_refused(kind):
    state = played(kind).state_dict()
    bad = copy.deepcopy(state)
    bad["updates"] = 10**18
    with pytest.raises(ValueError) as e:
        Curriculum(kind, ENVS).load_state_dict(bad)
    assert "field `updates`" in str(e.value) and "found 1000000000000000000" in str(e.value), str(e.value)


def test_hdc_stage_counts_beyond_the_episodes_are_refused():
    state = played("hdc").state_dict()
    env = state["per_env"][0]
    bad = copy.deepcopy(state)
    bad["per_env"][0]["stage_episodes"] = 4_000_000_000
    with pytest.raises(ValueError) as e:
        Curriculum("hdc", ENVS).load_state_dict(bad)
    message = str(e.value)
    assert "per_env[0].stage_episodes" in message, message
    assert f"at most episodes ({env['episodes']})" in message and "found 4000000000" in message, message


def test_plr_draw_counts_must_add_up():
    # Every draw is a replay or a new level.
    state = played("plr").state_dict()
    bad = copy.deepcopy(state)
    bad["samples"] = 0
    with pytest.raises(ValueError) as e:
        Curriculum("plr", ENVS).load_state_dict(bad)
    assert "field `samples`" in str(e.value), str(e.value)


def _numeric_paths(value, path=()):
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield path
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _numeric_paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _numeric_paths(v, (*path, i))


def _set(state, path, value):
    for p in path[:-1]:
        state = state[p]
    state[path[-1]] = value


@pytest.mark.parametrize("kind", KINDS)
def test_an_edited_state_is_refused_or_keeps_every_invariant(kind):
    """Each number of a saved state replaced by an edge value: either the load is a ValueError
    or the sampler it gives hands out tickets it accepts back, and its state loads again."""
    state = played(kind).state_dict()
    paths = list(_numeric_paths(state))[:300]
    loaded = 0
    for path in paths:
        for value in (0, 1, 4_000_000_000, 10**18):
            edited = copy.deepcopy(state)
            _set(edited, path, value)
            cur = Curriculum(kind, ENVS, seed=5)
            try:
                cur.load_state_dict(edited)
            except ValueError:
                continue
            loaded += 1
            tickets = cur.sample(6)
            cur.update(tickets, [t.seed % 2 == 0 for t in tickets])
            again = Curriculum(kind, ENVS, seed=6)
            again.load_state_dict(json.loads(json.dumps(cur.state_dict())))
            assert again.state_dict() == cur.state_dict(), (path, value)
    # Some edits are harmless (a seed, an estimate): the test is not only refusals.
    assert loaded > 0
