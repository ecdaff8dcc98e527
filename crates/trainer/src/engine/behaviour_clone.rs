//! Behaviour cloning on the engine's network (see [`crate::pretrain`] for the method).

use burn::optim::{GradientsParams, Optimizer};
use burn::tensor::activation::log_softmax;
use burn::tensor::backend::AutodiffBackend;
use burn::tensor::{Int, Tensor, TensorData};
use envdist_core::{ActionId, Env, InvalidValue, Rng, TaskSampler};
use rayon::prelude::*;

use super::Core;
use super::grad_ops::clip_global_norm;
use crate::adam::adam;
use crate::backend::to_vec;
use crate::encode::{BatchBuffers, Features, encode};
use crate::error::TrainerError;
use crate::model::Inputs;
use crate::pretrain::{CloneConfig, CloneSummary};

struct Demo {
    env: Box<dyn Env>,
    features: Features,
    steps: u32,
    max_steps: u32,
}

impl<B: AutodiffBackend> Core<B> {
    /// Clone the solvers' behaviour on tasks from `sampler` (outcomes are reported to it, so a
    /// curriculum can drive the demonstrations too). `on_step(samples so far)` after each
    /// gradient step.
    pub fn clone_behaviour(
        &mut self,
        sampler: &mut dyn TaskSampler,
        cfg: &CloneConfig,
        on_step: &mut dyn FnMut(u64),
    ) -> Result<CloneSummary, TrainerError> {
        cfg.validate()?;
        let model_cfg = self.cfg.model.clone();
        let mut optim = adam();
        let mut rng = Rng::derive(cfg.seed, 0x4243);
        let start = |task: envdist_core::Task,
                     factory: &dyn envdist_core::EnvFactory|
         -> Result<Demo, TrainerError> {
            let mut env = factory
                .make(&task.env)
                .map_err(|e| TrainerError::UnknownEnv(e.0))?;
            let max_steps = env.spec().max_steps.max(1);
            let obs = env.reset(&task);
            let features = encode(&obs, env.legal_actions(), &model_cfg);
            Ok(Demo {
                env,
                features,
                steps: 0,
                max_steps,
            })
        };
        let mut demos: Vec<(Demo, envdist_core::Task)> = Vec::with_capacity(cfg.parallel);
        for _ in 0..cfg.parallel {
            let task = sampler.sample();
            demos.push((start(task.clone(), self.factory.as_ref())?, task));
        }
        let (mut done_eps, mut solved_eps, mut unlabelled) = (0u64, 0u64, 0u64);
        let mut batch: Vec<(Features, ActionId)> = Vec::with_capacity(cfg.minibatch);
        let mut bufs = BatchBuffers::default();
        let (mut samples, mut steps) = (0u64, 0u64);
        let total_steps = cfg.samples / cfg.minibatch as u64;
        let tail_from = total_steps - total_steps / 10;
        let (mut tail_loss, mut tail_hits, mut tail_n) = (0.0f64, 0u64, 0u64);
        while samples + (cfg.minibatch as u64) <= cfg.samples {
            if samples == 0 && unlabelled > cfg.samples.max(cfg.minibatch as u64 * 64) {
                return Err(TrainerError::Config(InvalidValue::new(
                    "sampler",
                    "environments whose solvers give legal actions",
                    format!("{unlabelled} steps without one and no labelled sample"),
                )));
            }
            // One step of every demonstration, in parallel: the solver's label, the action
            // actually played, the next observation.
            let noise: Vec<(f64, u64)> = (0..demos.len())
                .map(|_| (rng.next_f64(), rng.next_u64()))
                .collect();
            let model_cfg = &model_cfg;
            let stepped: Vec<(Features, Option<ActionId>, bool, bool)> = demos
                .par_iter_mut()
                .zip(noise.par_iter())
                .map(|((d, _), &(u, pick))| {
                    let legal = d.env.legal_actions();
                    // A state without a legal solver action teaches nothing (its label would
                    // be masked out of the softmax): it is played but not learned from.
                    let target = d.env.oracle_action().filter(|a| legal.contains(*a));
                    let label = target.unwrap_or(ActionId::WAIT);
                    let played = if u < cfg.noise as f64 && legal.count() > 0 {
                        legal
                            .iter()
                            .nth((pick % legal.count() as u64) as usize)
                            .unwrap_or(label)
                    } else {
                        label
                    };
                    let step = d.env.step(played);
                    d.steps += 1;
                    let ended = step.done || step.truncated || d.steps >= d.max_steps;
                    let seen = std::mem::replace(
                        &mut d.features,
                        encode(&step.observation, step.legal, model_cfg),
                    );
                    (seen, target, ended, step.done && step.success)
                })
                .collect();
            for (i, (features, target, ended, success)) in stepped.into_iter().enumerate() {
                if let Some(label) = target {
                    batch.push((features, label));
                } else {
                    unlabelled += 1;
                }
                if ended {
                    done_eps += 1;
                    solved_eps += success as u64;
                    let task = demos[i].1.clone();
                    sampler.update(&envdist_core::EpisodeOutcome {
                        task,
                        success,
                        episode_return: success as u32 as f32,
                        steps: demos[i].0.steps,
                    })?;
                    let next = sampler.sample();
                    demos[i] = (start(next.clone(), self.factory.as_ref())?, next);
                }
                if batch.len() == cfg.minibatch {
                    let (loss, hits) = self.clone_step(&mut optim, &batch, &mut bufs, cfg.lr)?;
                    if steps >= tail_from {
                        tail_loss += loss as f64;
                        tail_hits += hits;
                        tail_n += 1;
                    }
                    samples += batch.len() as u64;
                    steps += 1;
                    batch.clear();
                    on_step(samples);
                    if samples + (cfg.minibatch as u64) > cfg.samples {
                        break;
                    }
                }
            }
        }
        Ok(CloneSummary {
            samples,
            steps,
            final_loss: (tail_loss / tail_n.max(1) as f64) as f32,
            final_accuracy: tail_hits as f32 / (tail_n.max(1) * cfg.minibatch as u64) as f32,
            demo_success: solved_eps as f32 / done_eps.max(1) as f32,
            unlabelled_steps: unlabelled,
        })
    }

    /// One cross-entropy step on `batch`; returns its loss and how many argmax predictions
    /// matched the label.
    fn clone_step(
        &mut self,
        optim: &mut impl Optimizer<crate::model::PolicyNet<B>, B>,
        batch: &[(Features, ActionId)],
        bufs: &mut BatchBuffers,
        lr: f32,
    ) -> Result<(f32, u64), TrainerError> {
        let m = batch.len();
        bufs.fill(batch.iter().map(|(f, _)| f), &self.cfg.model);
        let x = Inputs::<B>::from_buffers(bufs, &self.cfg.model, &self.device);
        let labels: Vec<i32> = batch.iter().map(|(_, a)| a.index() as i32).collect();
        let labels_t =
            Tensor::<B, 2, Int>::from_data(TensorData::new(labels.clone(), [m, 1]), &self.device);
        let (logits, _) = self.model.forward(x);
        let logp = log_softmax(logits, 1);
        let picked = logp.clone().gather(1, labels_t).reshape([m]);
        let loss = -picked.mean();
        let argmax = logp.detach().argmax(1).reshape([m]);
        let grads = loss.backward();
        let mut gp = GradientsParams::from_grads(grads, &self.model);
        clip_global_norm(&self.model, &mut gp, self.cfg.max_grad_norm);
        let model = self.model.clone();
        self.model = optim.step(lr as f64, model, gp);
        let l = to_vec(loss.detach().into_data())?[0];
        let am = argmax
            .into_data()
            .convert::<i64>()
            .into_vec::<i64>()
            .map_err(|e| TrainerError::Backend(format!("{e:?}")))?;
        let hits = am
            .iter()
            .zip(&labels)
            .filter(|(a, b)| **a == **b as i64)
            .count() as u64;
        Ok((l, hits))
    }
}
