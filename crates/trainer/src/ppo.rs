//! PPO's arithmetic: the advantage estimators (plain Rust, backend-free, so they are easy to
//! test) and the clipped objective ([`clipped_ppo_loss`]), the one place the loss is written.

use std::collections::HashMap;

use burn::tensor::activation::log_softmax;
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Int, Tensor};

use crate::config::TrainConfig;

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

/// What the loss sees of a minibatch's rows (`m` of them): the network's outputs under the
/// parameters being learned, and the rollout's record of each row.
pub(crate) struct LossRows<B: AutodiffBackend> {
    /// Masked action logits `[m, actions]`.
    pub logits: Tensor<B, 2>,
    /// Value estimates `[m]`.
    pub values: Tensor<B, 1>,
    /// The actions played `[m, 1]`.
    pub actions: Tensor<B, 2, Int>,
    /// Their log-probabilities under the rollout's policy `[m]`.
    pub old_logp: Tensor<B, 1>,
    /// Advantages `[m]` (standardised as the configuration asks).
    pub advantages: Tensor<B, 1>,
    /// Value targets `[m]`.
    pub returns: Tensor<B, 1>,
    /// Per-row weight `[m]`: 0 for steps of episodes played for their scores only.
    pub weight: Tensor<B, 1>,
    /// The KL penalty's reference, the starting policy's log-probabilities `[m, actions]`
    /// (with `kl_coef` > 0 only).
    pub start_logp: Option<Tensor<B, 2>>,
}

/// How a shard's row terms become its part of the minibatch's means.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reduction {
    /// The shard is the whole minibatch: plain means (the records' arithmetic).
    pub whole: bool,
    /// Rows of the whole minibatch: a shard's means are its sums divided by this, so the
    /// shards' parts add up to the minibatch's mean.
    pub rows_total: usize,
    /// Some rows weigh nothing: the value and entropy terms are weighted means too.
    pub masked: bool,
    /// Kept weight of the whole minibatch (at least 1).
    pub w_sum: f32,
}

/// The terms of [`clipped_ppo_loss`], each a one-element tensor.
pub(crate) struct PpoLoss<B: AutodiffBackend> {
    /// What is differentiated.
    pub loss: Tensor<B, 1>,
    /// The clipped surrogate, negated (a loss).
    pub policy: Tensor<B, 1>,
    /// Half the squared error of the values.
    pub value: Tensor<B, 1>,
    /// The policy's entropy (nats).
    pub entropy: Tensor<B, 1>,
    /// `KL(now || start)` over the whole action distribution (with a KL penalty only).
    pub kl: Option<Tensor<B, 1>>,
    /// The approximate KL between the rollout's policy and this one (`(r − 1) − log r`).
    pub approx_kl: Tensor<B, 1>,
    /// Share of rows whose ratio lies outside `1 ± clip`.
    pub clip_fraction: Tensor<B, 1>,
}

/// PPO's clipped objective (Schulman et al. 2017, as CleanRL writes it): the policy term
/// `−mean(w · min(r·A, clip(r, 1 ± ε)·A))`, plus `value_coef` times the value loss, minus
/// `entropy_coef` times the entropy, plus `kl_coef` times the KL to the starting policy.
/// `value_only` (the critic warm-up) differentiates the value loss alone.
pub(crate) fn clipped_ppo_loss<B: AutodiffBackend>(
    rows: LossRows<B>,
    reduce: Reduction,
    cfg: &TrainConfig,
    value_only: bool,
) -> PpoLoss<B> {
    let LossRows {
        logits,
        values,
        actions,
        old_logp,
        advantages,
        returns,
        weight,
        start_logp,
    } = rows;
    let m = old_logp.dims()[0];
    let w_sum = reduce.w_sum;
    let mean = |t: Tensor<B, 1>| {
        if reduce.whole {
            t.mean()
        } else {
            t.sum() / reduce.rows_total as f32
        }
    };
    let logp_all = log_softmax(logits, 1);
    let logp = logp_all.clone().gather(1, actions).reshape([m]);
    let log_ratio = logp - old_logp;
    let ratio = log_ratio.clone().exp();
    let s1 = ratio.clone() * advantages.clone();
    let s2 = ratio.clone().clamp(1.0 - cfg.clip, 1.0 + cfg.clip) * advantages;
    let pg = -(s1.min_pair(s2) * weight.clone()).sum() / w_sum;
    let sq = (values - returns).powi_scalar(2) * 0.5;
    let ent = -(logp_all.clone().exp() * logp_all.clone())
        .sum_dim(1)
        .reshape([m]);
    let (v_loss, entropy) = if reduce.masked {
        (
            (sq * weight.clone()).sum() / w_sum,
            (ent * weight.clone()).sum() / w_sum,
        )
    } else {
        (mean(sq), mean(ent))
    };
    // KL(now || start) per state over the whole action distribution (illegal actions have
    // a large finite negative logit in both: they add `0 * (x - x)`, nothing).
    let kl = start_logp.map(|start| {
        let rows = (logp_all.clone().exp() * (logp_all.clone() - start))
            .sum_dim(1)
            .reshape([m]);
        if reduce.masked {
            (rows * weight.clone()).sum() / w_sum
        } else {
            mean(rows)
        }
    });
    let mut loss = if value_only {
        v_loss.clone()
    } else {
        pg.clone() + v_loss.clone() * cfg.value_coef - entropy.clone() * cfg.entropy_coef
    };
    if let (Some(kl), false) = (&kl, value_only) {
        loss = loss + kl.clone() * cfg.kl_coef;
    }
    let approx_kl = mean((ratio.clone() - 1.0) - log_ratio);
    let clip_fraction = mean((ratio - 1.0).abs().greater_elem(cfg.clip).float());
    PpoLoss {
        loss,
        policy: pg,
        value: v_loss,
        entropy,
        kl,
        approx_kl,
        clip_fraction,
    }
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
