//! Saved states checked for meaning, not only shape: a state whose values cannot occur
//! together (a stuck random stream, counters that disagree, a stage the state machine cannot
//! reach) is refused with an error naming the field, for every sampler kind; and the
//! environments a retarget drops keep their in-flight outcomes and their counts.

use envdist_core::{EnvId, HarnessLevel, Task};
use envdist_curriculum::{SamplerConfig, synthetic_specs};
use serde_json::{Value, json};

use crate::outcome;

fn specs() -> Vec<envdist_core::EnvSpec> {
    synthetic_specs("m", &[(1, 3), (2, 6), (4, 4)])
}

fn config(json: Value) -> SamplerConfig {
    SamplerConfig::from_json(&json).unwrap()
}

/// The state of `config`'s sampler after `rounds` episodes (solved two times in three), and
/// `in_flight` more tasks drawn and not reported.
fn trained(config: &SamplerConfig, rounds: u64, in_flight: u64) -> Value {
    let mut s = config.build(&specs(), 5).unwrap();
    for i in 0..rounds {
        let t = s.sample();
        s.update(&outcome(t, i % 3 != 0)).unwrap();
    }
    for _ in 0..in_flight {
        s.sample();
    }
    s.state()
}

/// `edit` applied to a trained state must be refused, naming `field`; the trained state
/// itself loads.
fn refused(config: &SamplerConfig, rounds: u64, edit: impl Fn(&mut Value), field: &str) {
    refused_in_flight(config, rounds, 0, edit, field)
}

/// [`refused`] of a state with `in_flight` tasks drawn and not reported.
fn refused_in_flight(
    config: &SamplerConfig,
    rounds: u64,
    in_flight: u64,
    edit: impl Fn(&mut Value),
    field: &str,
) {
    let state = trained(config, rounds, in_flight);
    let mut s = config.build(&specs(), 0).unwrap();
    s.restore(&state)
        .unwrap_or_else(|e| panic!("{}: the trained state is refused: {e}", config.kind()));
    let mut bad = state.clone();
    edit(&mut bad);
    assert_ne!(bad, state, "{field}: the edit changed nothing");
    let mut s = config.build(&specs(), 0).unwrap();
    let before = s.state();
    let e = s.restore(&bad).unwrap_err().0;
    assert!(
        e.contains(field),
        "{}: expected {field}, got: {e}",
        config.kind()
    );
    assert_eq!(s.state(), before, "a refused state changed the sampler");
}

/// The value at a JSON pointer (`/body/envs/1/top`) of a state, which must be there.
fn at<'a>(state: &'a mut Value, pointer: &str) -> &'a mut Value {
    state
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("the state has no {pointer}"))
}

/// The edit that sets the value at `pointer`.
fn set(pointer: &'static str, value: Value) -> impl Fn(&mut Value) {
    move |s| *at(s, pointer) = value.clone()
}

/// The edit that adds `by` to the integer at `pointer`.
fn add(pointer: &'static str, by: i64) -> impl Fn(&mut Value) {
    move |s| {
        let v = at(s, pointer);
        *v = json!(v.as_i64().unwrap() + by);
    }
}

#[test]
fn every_kind_refuses_a_stuck_random_stream_and_counters_that_disagree() {
    for kind in SamplerConfig::KINDS {
        let c = SamplerConfig::default_for(kind).unwrap();
        refused(&c, 50, set("/rng/s", json!([0, 0, 0, 0])), "all-zero");
        refused(&c, 50, add("/updates", 1), "field `updates`");
        let huge = json!(1_000_000_000_000_000_000u64);
        refused(&c, 50, set("/updates", huge), "field `updates`");
        // Outcomes of unknown environments are refused, so only a retired one has any.
        refused(&c, 50, set("/unknown", json!(3)), "field `unknown`");
    }
}

#[test]
fn hdc_refuses_stages_its_state_machine_cannot_reach() {
    let c = config(json!({"kind": "hdc", "min_episodes": 3, "window_step": 2}));
    // 4e9 stage episodes out of a few dozen.
    let many = json!(4_000_000_000u32);
    let field = "per_env[0].stage_episodes";
    refused(&c, 40, set("/per_env/0/stage_episodes", many), field);
    let field = "per_env[0].capped_advances";
    refused(
        &c,
        40,
        set("/per_env/0/capped_advances", json!(1_000_000)),
        field,
    );
    // Range 2..=6, window 2 moved by 2: the window starts at 2, 4 or 5 (the top).
    let field = "per_env[1].window_lo";
    refused(&c, 1, set("/per_env/1/window_lo", json!(3)), field);
    // `ready` only at the last stage (H4, top window).
    refused(
        &c,
        1,
        set("/per_env/0/ready", json!(true)),
        "per_env[0].ready",
    );
    // An EMA without a counted episode; a competent stage left open.
    let env = |s: &mut Value, k: usize, f: &str, v: Value| s["per_env"][k][f] = v;
    refused(
        &c,
        1,
        |s| {
            env(s, 0, "stage_episodes", json!(0));
            env(s, 0, "ema", json!(0.5));
        },
        "per_env[0].ema",
    );
    refused(
        &c,
        40,
        |s| {
            let episodes = s["per_env"][1]["episodes"].as_u64().unwrap();
            assert!(episodes >= 3);
            env(s, 1, "stage_episodes", json!(3));
            env(s, 1, "ema", json!(0.99));
            env(s, 1, "ready", json!(false));
        },
        "per_env[1].ema",
    );
    // Only mode global moves the shared level.
    refused(&c, 1, set("/global_level", json!("H2")), "global_level");
}

#[test]
fn the_rivals_refuse_bodies_their_rules_cannot_reach() {
    let ladder = SamplerConfig::default_for("ladder").unwrap();
    refused(&ladder, 30, add("/body/envs/1/top", 1), "body.envs[1].top");
    let checks = set("/body/envs/1/checks", json!(1_000_000));
    refused(&ladder, 30, checks, "body.envs[1].checks");

    let plr = config(json!({"kind": "plr", "buffer_size": 8}));
    refused(&plr, 60, add("/samples", 1), "field `samples`");
    refused(&plr, 60, add("/body/clock", 1), "body.clock");
    let stamp = set("/body/levels/0/stamp", json!(-1_000_000));
    refused(&plr, 60, stamp, "body.levels[0].stamp");
    refused_in_flight(
        &plr,
        3,
        2,
        |s| {
            let drawn = s["samples"].as_u64().unwrap() + 5;
            s["body"]["pending"][0]["drawn_at"] = json!(drawn);
        },
        "body.pending[0].drawn_at",
    );
    let scale = set("/body/pending/0/task/scale", json!(99));
    refused_in_flight(&plr, 3, 2, scale, "body.pending[0].task");

    let pass = config(json!({"kind": "pass_rate", "group_size": 4}));
    // The first arm that completed a group.
    fn played_arm(s: &mut Value) -> &mut Value {
        let arms = s["body"]["arms"].as_array_mut().unwrap();
        let k = arms.iter().position(|a| a["groups"].as_u64().unwrap() > 0);
        &mut arms[k.expect("an arm completed a group")]
    }
    refused(
        &pass,
        80,
        |s| played_arm(s)["pass_rate"] = json!(0.3),
        ".pass_rate",
    );
    refused(
        &pass,
        80,
        |s| {
            let arm = played_arm(s);
            arm["pass_rate"] = json!(0.5);
            arm["pool"] = json!("easy");
            arm["filed_at"] = json!(1);
        },
        ".pool",
    );

    let learn = SamplerConfig::default_for("learnability").unwrap();
    refused(
        &learn,
        1,
        |s| {
            let arms = s["body"]["arms"].as_array_mut().unwrap();
            let k = arms.iter().position(|a| a["episodes"] == 0).unwrap();
            arms[k]["p"] = json!(0.25);
        },
        "the prior",
    );
    let episodes = set("/body/arms/0/episodes", json!(1_000_000));
    refused(&learn, 30, episodes, "body.arms[0..3].episodes");

    let sec = config(json!({"kind": "sec", "batch_episodes": 8}));
    refused(
        &sec,
        30,
        set("/body/arms/0/q", json!(100.0)),
        "body.arms[0].q",
    );
    refused(&sec, 30, add("/body/batch_count", 1), "body.batch_count");

    let lp = config(json!({"kind": "learning_progress", "update_interval": 8}));
    refused(
        &lp,
        30,
        |s| {
            let n = s["body"]["interval_count"].as_i64().unwrap();
            s["body"]["interval_count"] = json!(if n > 0 { n - 1 } else { 1 });
        },
        "body.interval_count",
    );
    let measured = set("/body/arms/0/measured", json!(1_000));
    refused(&lp, 30, measured, "body.arms[0].measured");
}

/// A retarget drops an environment: an outcome of its task still in flight is taken (counted
/// apart), the dropped environment's counts stay in `updates`, and the state, holding it as
/// retired, loads into a sampler over the new set; an environment it never drew is refused.
#[test]
fn a_dropped_environment_keeps_its_in_flight_outcomes() {
    let mut before = specs();
    before.extend(synthetic_specs("gone", &[(1, 2)]));
    for kind in SamplerConfig::KINDS {
        let c = SamplerConfig::default_for(kind).unwrap();
        let mut s = c.build(&before, 3).unwrap();
        for i in 0..300 {
            let t = s.sample();
            s.update(&outcome(t, i % 2 == 0)).unwrap();
        }
        let in_flight = (0..200)
            .map(|_| s.sample())
            .find(|t| t.env.as_str() == "gone/e0")
            .expect("the environment to drop is drawn");
        let updates = s.updates();
        s.retarget(&specs()).unwrap();
        assert_eq!(s.updates(), updates, "{kind}: the counts carried on");
        s.update(&outcome(in_flight.clone(), true))
            .unwrap_or_else(|e| panic!("{kind}: an in-flight outcome is refused: {e}"));
        assert_eq!(s.updates(), updates, "{kind}: counted apart");
        let stranger = Task {
            env: EnvId::new("never/e0"),
            ..in_flight.clone()
        };
        let e = s.update(&outcome(stranger, true)).unwrap_err();
        assert_eq!(e.problem.field, "env", "{kind}: {e}");
        let out_of_range = Task {
            scale: 3,
            ..in_flight
        };
        let e = s.update(&outcome(out_of_range, true)).unwrap_err();
        assert_eq!(e.problem.field, "scale", "{kind}: {e}");
        let state = s.state();
        let retired = state
            .get("retired")
            .unwrap_or_else(|| panic!("{kind}: no retired list in {state}"));
        assert_eq!(retired[0]["id"], "gone/e0", "{kind}");
        let mut again = c.build(&specs(), 0).unwrap();
        again
            .restore(&state)
            .unwrap_or_else(|e| panic!("{kind}: the retargeted state is refused: {e}"));
        assert_eq!(again.state(), state, "{kind}");
        assert_eq!(again.sample(), s.sample(), "{kind}");
    }
}

/// HDC in mode global: an environment a retarget adds joins at the shared level, so the
/// state after the retarget loads again.
#[test]
fn a_global_hdc_state_after_a_retarget_loads() {
    let c = config(json!({"kind": "hdc", "mode": "global", "min_episodes": 1, "window_width": 8}));
    let mut s = c.build(&specs()[..2], 1).unwrap();
    for _ in 0..200 {
        let t = s.sample();
        s.update(&outcome(t, true)).unwrap();
    }
    let level = s.hdc().unwrap().global_level();
    assert!(level > HarnessLevel::H0, "the shared level moved");
    s.retarget(&specs()).unwrap();
    let mut again = c.build(&specs(), 0).unwrap();
    again.restore(&s.state()).unwrap();
    assert_eq!(again.state(), s.state());
}
