//! The rollout: every env slot stepped together for `rollout_len` steps, one batched
//! inference per step, outcomes reported to the sampler in slot order.

use std::time::Instant;

use burn::module::AutodiffModule;
use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};
use envdist_core::{ActionId, EnvId, NUM_ACTIONS, Task, TaskSampler};

use super::Core;
use crate::backend::to_inner_device;
use crate::encode::{BatchBuffers, Features};
use crate::error::TrainerError;
use crate::play::{Slot, infer_rows, outcome, restart_slots, sample_action, step_slots};

/// One rollout, time-major (`[t][env]`).
pub(super) struct Rollout<IB: Backend> {
    pub features: Vec<Features>,
    /// Each step's uploaded patches, presence and masks (`[num_envs, ..]`), reused as the
    /// update's training inputs: nothing image-sized is uploaded twice.
    pub patches: Vec<Tensor<IB, 3>>,
    pub present: Vec<Tensor<IB, 3>>,
    pub mask: Vec<Tensor<IB, 2>>,
    pub actions: Vec<ActionId>,
    pub logp: Vec<f32>,
    pub values: Vec<f32>,
    pub rewards: Vec<f32>,
    pub ends: Vec<bool>,
    pub terminal: Vec<bool>,
    pub episode: Vec<usize>,
    pub episode_group: Vec<usize>,
    pub episode_return: Vec<Option<f32>>,
    /// Per episode: whether its steps enter the loss (see `TaskSampler::trains_on`).
    pub episode_trains: Vec<bool>,
    pub last_values: Vec<f32>,
    pub finished: u32,
    pub successes: u32,
    pub return_sum: f32,
    pub env_outcomes: std::collections::BTreeMap<EnvId, [u32; 2]>,
    /// Per environment, the sums of the harness levels and scales of its ended episodes
    /// (where a curriculum stands; divided by `env_outcomes`' counts in the statistics).
    pub env_level_scale_sums: std::collections::BTreeMap<EnvId, [f64; 2]>,
    /// Seconds of batched inference (upload, forward, read back) during the rollout.
    pub infer_seconds: f64,
}

impl<B: AutodiffBackend> Core<B> {
    /// Play one rollout of `num_envs × rollout_len` steps with tasks from `sampler`.
    pub(super) fn rollout(
        &mut self,
        sampler: &mut dyn TaskSampler,
    ) -> Result<Rollout<B::InnerBackend>, TrainerError> {
        let cfg = self.cfg.clone();
        let n = cfg.num_envs;
        let mut groups: Vec<EnvId> = Vec::new();
        let mut group_of = |id: &EnvId| match groups.iter().position(|g| g == id) {
            Some(i) => i,
            None => {
                groups.push(id.clone());
                groups.len() - 1
            }
        };
        while self.slots.len() < n {
            let task = sampler.sample();
            let trains = sampler.trains_on(&task);
            let mut slot = Slot::start(self.factory.as_ref(), None, task, &cfg.model)?;
            slot.trains = trains;
            self.slots.push(slot);
        }
        let cap = n * cfg.rollout_len;
        let mut r = Rollout {
            features: Vec::with_capacity(cap),
            patches: Vec::with_capacity(cfg.rollout_len),
            present: Vec::with_capacity(cfg.rollout_len),
            mask: Vec::with_capacity(cfg.rollout_len),
            actions: Vec::with_capacity(cap),
            logp: Vec::with_capacity(cap),
            values: Vec::with_capacity(cap),
            rewards: Vec::with_capacity(cap),
            ends: Vec::with_capacity(cap),
            terminal: Vec::with_capacity(cap),
            episode: Vec::with_capacity(cap),
            episode_group: Vec::new(),
            episode_return: Vec::new(),
            episode_trains: Vec::new(),
            last_values: Vec::new(),
            finished: 0,
            successes: 0,
            return_sum: 0.0,
            env_outcomes: Default::default(),
            env_level_scale_sums: Default::default(),
            infer_seconds: 0.0,
        };
        let mut current: Vec<usize> = (0..n).collect();
        for s in &self.slots {
            r.episode_group.push(group_of(&s.task.env));
            r.episode_return.push(None);
            r.episode_trains.push(s.trains);
        }
        let inner = self.model.valid();
        let inner_device = to_inner_device::<B>(&self.device);
        for _ in 0..cfg.rollout_len {
            let t_infer = Instant::now();
            let rows: Vec<&Features> = self.slots.iter().map(|s| &s.features).collect();
            // The read back of the logits waits for the device: the time is the inference's.
            let mut out = infer_rows(
                &inner,
                two_buffers(&mut self.bufs),
                &rows,
                &cfg.model,
                &inner_device,
            )?;
            let (patches, present, mask) = out.kept_inputs();
            r.patches.push(patches);
            r.present.push(present);
            r.mask.push(mask);
            let (logits, values) = (out.logits, out.values);
            r.infer_seconds += t_infer.elapsed().as_secs_f64();
            let mut actions = Vec::with_capacity(n);
            for e in 0..n {
                let (a, lp) = sample_action(
                    &logits[e * NUM_ACTIONS..(e + 1) * NUM_ACTIONS],
                    &mut self.rng,
                );
                actions.push(a);
                r.logp.push(lp);
                r.values.push(values[e]);
                r.episode.push(current[e]);
                // The slot's features are replaced by the step (or the restart) below.
                r.features.push(std::mem::replace(
                    &mut self.slots[e].features,
                    Features {
                        patches: Vec::new(),
                        text: Default::default(),
                        legal: Default::default(),
                    },
                ));
            }
            let results = step_slots(&mut self.slots, &actions, &cfg.model);
            r.actions.extend(actions);
            // Outcomes are reported and new tasks drawn in slot order (the sampler is
            // sequential and its order fixes the run); the envs restart in parallel.
            let mut restarts: Vec<(usize, Task)> = Vec::new();
            let mut trains_next: Vec<bool> = Vec::new();
            for (e, res) in results.iter().enumerate() {
                r.rewards.push(res.reward);
                r.ends.push(res.ended);
                r.terminal.push(res.terminal);
                if res.ended {
                    let out = outcome(&self.slots[e], res.success);
                    sampler.update(&out)?;
                    r.finished += 1;
                    r.successes += res.success as u32;
                    r.return_sum += out.episode_return;
                    let counts = r.env_outcomes.entry(out.task.env.clone()).or_default();
                    counts[0] += 1;
                    counts[1] += res.success as u32;
                    let sums = r
                        .env_level_scale_sums
                        .entry(out.task.env.clone())
                        .or_default();
                    sums[0] += out.task.harness.index() as f64;
                    sums[1] += f64::from(out.task.scale);
                    r.episode_return[current[e]] = Some(out.episode_return);
                    let task = sampler.sample();
                    trains_next.push(sampler.trains_on(&task));
                    restarts.push((e, task));
                }
            }
            restart_slots(
                &mut self.slots,
                &restarts,
                self.factory.as_ref(),
                &cfg.model,
            )?;
            for ((e, task), trains) in restarts.iter().zip(trains_next) {
                self.slots[*e].trains = trains;
                current[*e] = r.episode_group.len();
                r.episode_group.push(group_of(&task.env));
                r.episode_return.push(None);
                r.episode_trains.push(trains);
            }
            self.env_steps = self.env_steps.saturating_add(n as u64);
        }
        let rows: Vec<&Features> = self.slots.iter().map(|s| &s.features).collect();
        r.last_values = infer_rows(
            &inner,
            two_buffers(&mut self.bufs),
            &rows,
            &cfg.model,
            &inner_device,
        )?
        .values;
        Ok(r)
    }
}

/// Per environment and over all, the mean harness level and mean scale (`[level, scale]`) of
/// the rollout's ended episodes; `None` over all when none ended.
#[allow(clippy::type_complexity)]
pub(super) fn level_scale_means<B: Backend>(
    r: &Rollout<B>,
) -> (
    std::collections::BTreeMap<EnvId, [f32; 2]>,
    Option<[f32; 2]>,
) {
    let (mut total, mut episodes) = ([0.0f64; 2], 0u64);
    let per_env = r
        .env_level_scale_sums
        .iter()
        .map(|(env, sums)| {
            let n = r.env_outcomes.get(env).map_or(0, |c| c[0]);
            total[0] += sums[0];
            total[1] += sums[1];
            episodes += u64::from(n);
            let n = f64::from(n.max(1));
            (env.clone(), [(sums[0] / n) as f32, (sums[1] / n) as f32])
        })
        .collect();
    let overall = (episodes > 0).then(|| {
        let n = episodes as f64;
        [(total[0] / n) as f32, (total[1] / n) as f32]
    });
    (per_env, overall)
}

/// The first two of the host buffers (there are always at least two: the rollout's halves).
fn two_buffers(bufs: &mut [BatchBuffers]) -> &mut [BatchBuffers; 2] {
    bufs.first_chunk_mut::<2>()
        .expect("Core keeps at least two batch buffers")
}
