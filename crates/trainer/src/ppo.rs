//! Advantage estimators (plain Rust, backend-free, so they are easy to test).

use std::collections::HashMap;

/// GAE over a rollout stored time-major (`[t][env]`, `n_envs` per row).
///
/// `ends[i]` marks that the episode ended after sample `i`; `terminal[i]` that it ended by
/// its rules, so nothing is bootstrapped past it. A time-limit end bootstraps from the value
/// of the state it was cut at (`values[i]`, an approximation: that state's successor is not
/// kept). `last_values` are the values of each env's state after the last step.
/// Returns `(advantages, returns)`.
#[allow(clippy::too_many_arguments)]
pub fn gae(
    rewards: &[f32],
    values: &[f32],
    ends: &[bool],
    terminal: &[bool],
    last_values: &[f32],
    n_envs: usize,
    gamma: f32,
    lambda: f32,
) -> (Vec<f32>, Vec<f32>) {
    let n = rewards.len();
    let t_len = n / n_envs.max(1);
    let mut adv = vec![0.0f32; n];
    for (e, &last) in last_values.iter().enumerate().take(n_envs) {
        let mut next_adv = 0.0f32;
        let mut next_value = last;
        for t in (0..t_len).rev() {
            let i = t * n_envs + e;
            let (bootstrap, carry) = if ends[i] {
                let v = if terminal[i] { 0.0 } else { values[i] };
                (v, 0.0)
            } else {
                (next_value, 1.0)
            };
            let delta = rewards[i] + gamma * bootstrap - values[i];
            next_adv = delta + gamma * lambda * carry * next_adv;
            adv[i] = next_adv;
            next_value = values[i];
        }
    }
    let ret = adv.iter().zip(values).map(|(a, v)| a + v).collect();
    (adv, ret)
}

/// GRPO-style group-relative advantages: every step of a finished episode gets the episode's
/// return standardised within its group (`(R - mean) / (std + 1e-6)`). `episode[i]` is the
/// episode index of sample `i`; `groups[ep]` its group key (the env) and `returns[ep]` its
/// return, `None` while unfinished. Returns the advantages and a 0/1 weight mask (0 for steps
/// of unfinished episodes and of groups of one, which carry no relative signal).
pub fn group_relative(
    episode: &[usize],
    groups: &[usize],
    returns: &[Option<f32>],
) -> (Vec<f32>, Vec<f32>) {
    let mut stats: HashMap<usize, (f64, f64, usize)> = HashMap::new();
    for (g, r) in groups.iter().zip(returns) {
        if let Some(r) = r {
            let s = stats.entry(*g).or_default();
            s.0 += *r as f64;
            s.1 += (*r as f64).powi(2);
            s.2 += 1;
        }
    }
    let mut adv = vec![0.0; episode.len()];
    let mut weight = vec![0.0; episode.len()];
    for (i, &ep) in episode.iter().enumerate() {
        let (Some(r), Some(&(sum, sq, n))) = (returns[ep], stats.get(&groups[ep])) else {
            continue;
        };
        if n < 2 {
            continue;
        }
        let mean = sum / n as f64;
        let std = (sq / n as f64 - mean * mean).max(0.0).sqrt();
        adv[i] = ((r as f64 - mean) / (std + 1e-6)) as f32;
        weight[i] = 1.0;
    }
    (adv, weight)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn gae_matches_hand_computation() {
        // One env, three steps, terminal after the last: plain discounted TD(lambda).
        let (adv, ret) = gae(
            &[0.0, 0.0, 1.0],
            &[0.5, 0.5, 0.5],
            &[false, false, true],
            &[false, false, true],
            &[9.0],
            1,
            0.9,
            1.0,
        );
        // lambda = 1: advantage = discounted return - value.
        let expect = [0.81 - 0.5, 0.9 - 0.5, 1.0 - 0.5];
        for (a, e) in adv.iter().zip(expect) {
            assert!((a - e).abs() < 1e-6, "{adv:?}");
        }
        assert!((ret[0] - 0.81).abs() < 1e-6);
    }

    #[test]
    fn group_relative_centres_each_group() {
        let (adv, w) = group_relative(
            &[0, 0, 1, 2, 3],
            &[7, 7, 7, 8],
            &[Some(1.0), Some(0.0), None, Some(5.0)],
        );
        assert!(adv[0] > 0.9 && adv[2] < -0.9);
        assert_eq!(w, vec![1.0, 1.0, 1.0, 0.0, 0.0]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// With lambda = 1 and gamma = 1, an episode's first advantage plus its value is the
        /// sum of its rewards, whatever the values are.
        #[test]
        fn gae_lambda_one_is_monte_carlo(
            rewards in proptest::collection::vec(-1.0f32..1.0, 1..20),
            values_seed in 0u64..1000,
        ) {
            let n = rewards.len();
            let mut rng = envdist_core::Rng::seed_from_u64(values_seed);
            let values: Vec<f32> = (0..n).map(|_| rng.next_f32()).collect();
            let mut ends = vec![false; n];
            ends[n - 1] = true;
            let (adv, _) = gae(&rewards, &values, &ends, &ends, &[0.0], 1, 1.0, 1.0);
            let total: f32 = rewards.iter().sum();
            prop_assert!((adv[0] + values[0] - total).abs() < 1e-4);
        }
    }
}
