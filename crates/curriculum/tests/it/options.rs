//! HDC's options for studies on a budget: `balance_turns` (single- and multi-turn
//! environments get equal shares of the steps; the step counts resume with the state) and
//! `consolidate` (an environment that has mastered its last stage plays its whole scale range).

use envdist_core::{EnvId, EnvSpec, EpisodeOutcome, ScaleRange, Split, TaskSampler, Turn};
use envdist_curriculum::{HdcConfig, HdcSampler, Mode};

fn spec(id: &str, turn: Turn) -> EnvSpec {
    EnvSpec {
        id: EnvId::new(id),
        family: id.split('/').next().unwrap_or(id).into(),
        variant: "v".into(),
        turn,
        scale: ScaleRange { min: 1, max: 3 },
        split: Split::Pool,
        abilities: vec![],
        conflict_twin: None,
        instruction: String::new(),
        max_steps: 30,
    }
}

/// Three single-turn envs (1 step per episode) and two multi-turn envs (20 steps).
fn envs() -> Vec<EnvSpec> {
    let mut v: Vec<EnvSpec> = (0..3)
        .map(|i| spec(&format!("q/{i}"), Turn::Single))
        .collect();
    v.extend((0..2).map(|i| spec(&format!("m/{i}"), Turn::Multi)));
    v
}

/// Play `n` episodes, each reported before the next draw; returns steps of each kind.
fn play(s: &mut HdcSampler, n: usize) -> [u64; 2] {
    let mut steps = [0u64; 2];
    for k in 0..n {
        let task = s.sample();
        let single = task.env.as_str().starts_with('q');
        let len = if single { 1 } else { 20 };
        steps[usize::from(!single)] += len as u64;
        s.update(&EpisodeOutcome {
            task,
            success: k % 3 == 0,
            episode_return: 0.0,
            steps: len,
        })
        .unwrap();
    }
    steps
}

fn config(balance: bool) -> HdcConfig {
    HdcConfig {
        mode: Mode::BaselineH4,
        balance_turns: balance,
        ..HdcConfig::default()
    }
}

#[test]
fn balanced_draws_give_each_kind_half_the_steps() {
    let mut s = HdcSampler::new(&envs(), None, config(true), 5).unwrap();
    let steps = play(&mut s, 2000);
    let share = steps[0] as f64 / (steps[0] + steps[1]) as f64;
    assert!(
        (share - 0.5).abs() < 0.02,
        "single-turn share {share}: {steps:?}"
    );
    // Without balance, episodes are uniform over envs: single-turn gets 3 of 5 episodes but
    // a few percent of the steps.
    let mut plain = HdcSampler::new(&envs(), None, config(false), 5).unwrap();
    let steps = play(&mut plain, 2000);
    let share = steps[0] as f64 / (steps[0] + steps[1]) as f64;
    assert!(share < 0.1, "{share}");
}

#[test]
fn the_step_counts_resume_with_the_state_and_a_mismatch_is_refused() {
    let mut s = HdcSampler::new(&envs(), None, config(true), 9).unwrap();
    play(&mut s, 101);
    let saved = s.state();
    assert!(saved.get("turn_steps").is_some());
    let mut resumed = HdcSampler::new(&envs(), None, config(true), 0).unwrap();
    resumed.restore(&saved).unwrap();
    assert_eq!(play(&mut s, 50), play(&mut resumed, 50));
    assert_eq!(s.state(), resumed.state());
    // A state without the option has no step counts and is not this sampler's.
    let plain = HdcSampler::new(&envs(), None, config(false), 9).unwrap();
    assert!(plain.state().get("turn_steps").is_none());
    assert!(resumed.restore(&plain.state()).is_err());
}

#[test]
fn a_consolidated_environment_plays_its_whole_range_after_its_last_stage() {
    let envs = vec![spec("m/0", Turn::Multi)];
    let config = |consolidate| HdcConfig {
        mode: Mode::Full,
        min_episodes: 2,
        consolidate,
        ..HdcConfig::default()
    };
    let run = |consolidate| {
        let mut s = HdcSampler::new(&envs, None, config(consolidate), 3).unwrap();
        // Always succeed: the env climbs every window of every level, then keeps playing.
        let mut late_scales = std::collections::BTreeSet::new();
        for k in 0..400 {
            let task = s.sample();
            if k >= 300 {
                late_scales.insert(task.scale);
            }
            s.update(&EpisodeOutcome {
                task,
                success: true,
                episode_return: 1.0,
                steps: 3,
            })
            .unwrap();
        }
        assert_eq!(s.status()[0].harness, envdist_core::HarnessLevel::H4);
        late_scales
    };
    // Without it the last window (the top two scales) is all it plays; with it, every scale.
    assert_eq!(run(false).into_iter().collect::<Vec<_>>(), vec![2, 3]);
    assert_eq!(run(true).into_iter().collect::<Vec<_>>(), vec![1, 2, 3]);
}
