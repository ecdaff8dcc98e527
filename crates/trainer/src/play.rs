//! Batched acting: environment slots stepped together (in parallel with rayon), one batched
//! forward per step. Used by training rollouts, evaluation and gradient extraction.

use burn::module::AutodiffModule;
use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};
use envdist_core::InvalidValue;
use envdist_core::env::EnvFactory;
use envdist_core::{ActionId, Env, EnvSpec, EpisodeOutcome, NUM_ACTIONS, Observation, Rng, Task};
use rayon::prelude::*;

use crate::backend::{to_inner_device, to_vec};
use crate::config::ModelConfig;
use crate::encode::{BatchBuffers, Features, encode};
use crate::error::TrainerError;
use crate::model::{Inputs, PolicyNet};

/// One environment instance and the episode it is playing.
pub(crate) struct Slot {
    pub env: Box<dyn Env>,
    pub task: Task,
    pub features: Features,
    /// Actions of the current episode so far (a checkpoint replays them to restore the env).
    pub actions: Vec<ActionId>,
    pub episode_return: f32,
    pub max_steps: u32,
    /// Whether the episode's steps enter the loss (set by the trainer from its sampler).
    pub trains: bool,
}

impl Slot {
    /// Make (or reuse) an env for `task` and reset it.
    pub fn start(
        factory: &dyn EnvFactory,
        reuse: Option<Box<dyn Env>>,
        task: Task,
        cfg: &ModelConfig,
    ) -> Result<Self, TrainerError> {
        let env = match reuse {
            Some(e) if e.spec().id == task.env => e,
            _ => factory
                .make(&task.env)
                .map_err(|e| TrainerError::UnknownEnv(e.0))?,
        };
        let mut slot = Self {
            env,
            task: task.clone(),
            features: Features {
                patches: Vec::new(),
                text: Default::default(),
                legal: Default::default(),
            },
            actions: Vec::new(),
            episode_return: 0.0,
            max_steps: 1,
            trains: true,
        };
        slot.restart(factory, task, cfg)?;
        Ok(slot)
    }

    /// Start `task` in this slot, reusing its env when the id matches.
    pub fn restart(
        &mut self,
        factory: &dyn EnvFactory,
        task: Task,
        cfg: &ModelConfig,
    ) -> Result<(), TrainerError> {
        if self.env.spec().id != task.env {
            self.env = factory
                .make(&task.env)
                .map_err(|e| TrainerError::UnknownEnv(e.0))?;
        }
        let spec = self.env.spec();
        check_scale(spec, &task)?;
        self.max_steps = spec.max_steps.max(1);
        let obs = self.env.reset(&task);
        self.features = encode(&obs, self.env.legal_actions(), cfg);
        self.task = task;
        self.actions.clear();
        self.episode_return = 0.0;
        Ok(())
    }

    /// Restore a slot mid-episode by replaying its actions (envs are deterministic).
    pub fn replay(
        factory: &dyn EnvFactory,
        task: Task,
        actions: &[ActionId],
        cfg: &ModelConfig,
    ) -> Result<Self, TrainerError> {
        let mut slot = Self::start(factory, None, task, cfg)?;
        let mut last: Option<(Observation, envdist_core::ActionMask)> = None;
        for &a in actions {
            let step = slot.env.step(a);
            slot.episode_return += step.reward;
            last = Some((step.observation, step.legal));
        }
        slot.actions = actions.to_vec();
        if let Some((obs, legal)) = last {
            slot.features = encode(&obs, legal, cfg);
        }
        Ok(slot)
    }
}

/// What one step of one slot produced.
pub(crate) struct StepResult {
    pub reward: f32,
    /// The episode is over (done or truncated, including our own step-limit guard).
    pub ended: bool,
    /// Ended by the rules (not a time limit): no value bootstrap.
    pub terminal: bool,
    pub success: bool,
}

/// `task`'s scale is one its environment has, or the error naming both.
pub(crate) fn check_scale(spec: &EnvSpec, task: &Task) -> Result<(), TrainerError> {
    spec.scale.check(&task.env, task.scale)?;
    Ok(())
}

/// Step every slot with its action in parallel; slots whose episode ended keep their old
/// features (the caller restarts them).
pub(crate) fn step_slots(
    slots: &mut [Slot],
    actions: &[ActionId],
    cfg: &ModelConfig,
) -> Vec<StepResult> {
    slots
        .par_iter_mut()
        .zip(actions.par_iter())
        .map(|(slot, &a)| {
            let step = slot.env.step(a);
            slot.actions.push(a);
            slot.episode_return += step.reward;
            let over_limit = slot.actions.len() as u32 >= slot.max_steps;
            let ended = step.done || step.truncated || over_limit;
            if !ended {
                slot.features = encode(&step.observation, step.legal, cfg);
            }
            StepResult {
                reward: step.reward,
                ended,
                terminal: step.done,
                success: step.done && step.success,
            }
        })
        .collect()
}

/// Restart slot `i` with `task` for every `(i, task)` in `restarts`, in parallel (a reset
/// renders a frame and encodes its text: as much work as a step, so doing them one by one
/// would cap the speed-up of parallel stepping on single-turn envs, which restart every step).
pub(crate) fn restart_slots(
    slots: &mut [Slot],
    restarts: &[(usize, Task)],
    factory: &dyn EnvFactory,
    cfg: &ModelConfig,
) -> Result<(), TrainerError> {
    if restarts.is_empty() {
        return Ok(());
    }
    let mut task_of: Vec<Option<&Task>> = vec![None; slots.len()];
    for (i, t) in restarts {
        task_of[*i] = Some(t);
    }
    slots
        .par_iter_mut()
        .zip(task_of.par_iter())
        .filter_map(|(slot, t)| t.map(|t| (slot, t)))
        .try_for_each(|(slot, t)| slot.restart(factory, t.clone(), cfg))
}

/// The outcome of a slot's finished episode.
pub(crate) fn outcome(slot: &Slot, success: bool) -> EpisodeOutcome {
    EpisodeOutcome {
        task: slot.task.clone(),
        success,
        episode_return: slot.episode_return,
        steps: slot.actions.len() as u32,
    }
}

/// Forward a batch without autodiff: masked logits (row-major `[n, NUM_ACTIONS]`) and values.
pub(crate) fn infer<B: AutodiffBackend>(
    net: &PolicyNet<B>,
    bufs: &BatchBuffers,
    cfg: &ModelConfig,
    device: &B::Device,
) -> Result<(Vec<f32>, Vec<f32>), TrainerError> {
    let x = Inputs::<B::InnerBackend>::from_buffers(bufs, cfg, &to_inner_device::<B>(device));
    infer_inputs(&net.valid(), x)
}

/// Forward uploaded inputs through an inference copy of the network (from
/// `AutodiffModule::valid`): logits and values come back to the host in one read, so a
/// device backend synchronises once per call.
pub(crate) fn infer_inputs<IB: Backend>(
    net: &PolicyNet<IB>,
    x: Inputs<IB>,
) -> Result<(Vec<f32>, Vec<f32>), TrainerError> {
    let (logits, values) = net.forward(x);
    let [n, a] = logits.dims();
    let both = to_vec(Tensor::cat(vec![logits, values.unsqueeze_dim::<2>(1)], 1).into_data())?;
    let mut l = Vec::with_capacity(n * a);
    let mut v = Vec::with_capacity(n);
    for row in both.chunks_exact(a + 1) {
        l.extend_from_slice(&row[..a]);
        v.push(row[a]);
    }
    Ok((l, v))
}

/// The fewest rows a batch needs before [`infer_rows`] splits it in two.
const SPLIT_INFERENCE_ROWS: usize = 8;

/// Encode `rows` and forward them through `net` (an inference copy): masked logits (row-major
/// `[n, NUM_ACTIONS]`) and values, and the uploaded inputs ([`InferredRows::kept_inputs`]).
///
/// On the CPU backend, with more than one rayon thread and at least [`SPLIT_INFERENCE_ROWS`]
/// rows, the two halves of the batch are encoded and forwarded at once, one per thread: at a
/// rollout's batch sizes each product is under the backend's threading threshold, so a single
/// forward keeps one core busy. The numbers do not change: every row's output depends on that
/// row alone (the products' rows are independent and the patch embedding runs per frame;
/// checked by `blocked_products_equal_the_plain_ones_and_rows_do_not_depend_on_their_batch`
/// and the one-and-two-thread tests).
pub(crate) fn infer_rows<IB: Backend>(
    net: &PolicyNet<IB>,
    bufs: &mut [BatchBuffers; 2],
    rows: &[&Features],
    cfg: &ModelConfig,
    device: &IB::Device,
) -> Result<InferredRows<IB>, TrainerError> {
    let forward = |buf: &mut BatchBuffers, part: &[&Features]| {
        buf.fill(part.iter().copied(), cfg);
        let x = Inputs::<IB>::from_buffers(buf, cfg, device);
        let kept = (x.patches.clone(), x.present.clone(), x.mask.clone());
        infer_inputs(net, x).map(|out| (kept, out))
    };
    let [first, second] = bufs;
    // Only on the CPU backend: a device's kernels may be chosen by batch size, and two half
    // batches there would only queue two launches where one did.
    let cpu = std::any::TypeId::of::<IB>() == std::any::TypeId::of::<burn_flex::Flex>();
    if !cpu || rows.len() < SPLIT_INFERENCE_ROWS || rayon::current_num_threads() < 2 {
        let (inputs, (logits, values)) = forward(first, rows)?;
        return Ok(InferredRows {
            inputs: vec![inputs],
            logits,
            values,
        });
    }
    let (a, b) = rows.split_at(rows.len() / 2);
    let (ra, rb) = rayon::join(|| forward(first, a), || forward(second, b));
    let ((ia, (mut logits, mut values)), (ib, (lb, vb))) = (ra?, rb?);
    logits.extend(lb);
    values.extend(vb);
    Ok(InferredRows {
        inputs: vec![ia, ib],
        logits,
        values,
    })
}

/// A batch's uploaded patches, presence and mask (see [`InferredRows::kept_inputs`]).
pub(crate) type KeptInputs<IB> = (Tensor<IB, 3>, Tensor<IB, 3>, Tensor<IB, 2>);

/// What [`infer_rows`] returns: the batch's outputs, and its uploaded inputs in the parts it
/// ran in (joined only by a caller that keeps them, so evaluation copies nothing).
pub(crate) struct InferredRows<IB: Backend> {
    inputs: Vec<KeptInputs<IB>>,
    pub logits: Vec<f32>,
    pub values: Vec<f32>,
}

impl<IB: Backend> InferredRows<IB> {
    /// The whole batch's patches, presence and mask (`[n, ..]`), what a rollout keeps for its
    /// learning passes.
    pub fn kept_inputs(&mut self) -> KeptInputs<IB> {
        let mut parts = std::mem::take(&mut self.inputs);
        if parts.len() == 1 {
            return parts.pop().expect("one part");
        }
        let (mut patches, mut present, mut mask) = (Vec::new(), Vec::new(), Vec::new());
        for (p, s, m) in parts {
            patches.push(p);
            present.push(s);
            mask.push(m);
        }
        (
            Tensor::cat(patches, 0),
            Tensor::cat(present, 0),
            Tensor::cat(mask, 0),
        )
    }
}

/// Log-probabilities of one row of masked logits (f64 for a stable normaliser).
pub(crate) fn log_softmax_row(row: &[f32]) -> [f64; NUM_ACTIONS] {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let z: f64 = row.iter().map(|&l| (l as f64 - max).exp()).sum();
    let lz = z.ln() + max;
    let mut out = [0.0; NUM_ACTIONS];
    for (o, &l) in out.iter_mut().zip(row) {
        *o = l as f64 - lz;
    }
    out
}

/// Sample an action from a row of masked logits; returns it and its log-probability.
pub(crate) fn sample_action(row: &[f32], rng: &mut Rng) -> (ActionId, f32) {
    let lp = log_softmax_row(row);
    let u = rng.next_f64();
    let mut acc = 0.0;
    let mut pick = None;
    for (i, l) in lp.iter().enumerate() {
        let p = l.exp();
        if p <= 0.0 {
            continue;
        }
        acc += p;
        pick = Some(i);
        if u < acc {
            break;
        }
    }
    let i = pick.unwrap_or(0);
    (ActionId::new(i).unwrap_or(ActionId::WAIT), lp[i] as f32)
}

/// The most likely legal action (lowest index on ties).
pub(crate) fn greedy_action(row: &[f32]) -> ActionId {
    let mut best = 0;
    for (i, &l) in row.iter().enumerate() {
        if l > row[best] {
            best = i;
        }
    }
    ActionId::new(best).unwrap_or(ActionId::WAIT)
}

/// How [`play_episodes`] picks actions.
pub(crate) enum Mode<'a> {
    Greedy,
    /// Sample, episode `i` from its own stream `rngs[i]` (aligned with the tasks): an
    /// episode's actions then do not depend on which episodes share its batch.
    Sample(&'a mut [Rng]),
}

/// One recorded step of a played episode.
pub(crate) struct Recorded {
    pub features: Features,
    pub action: ActionId,
    pub reward: f32,
    pub value: f32,
}

/// A played episode.
pub(crate) struct Played {
    pub outcome: EpisodeOutcome,
    pub steps: Vec<Recorded>,
}

/// Play every task to the end, at most `width` at a time, one batched forward per step; a
/// slot whose episode ends takes the next waiting task, so the batch stays full until the
/// queue runs dry. Results are in task order. With `record`, each step's features, action,
/// reward and value are kept. With `step_cap`, every episode ends after at most that many
/// steps (as if truncated by a time limit), below its env's own limit.
#[allow(clippy::too_many_arguments)]
pub(crate) fn play_episodes<B: AutodiffBackend>(
    net: &PolicyNet<B>,
    factory: &dyn EnvFactory,
    cfg: &ModelConfig,
    device: &B::Device,
    tasks: &[Task],
    width: usize,
    mut mode: Mode<'_>,
    record: bool,
    step_cap: Option<u32>,
) -> Result<Vec<Played>, TrainerError> {
    if let Mode::Sample(rngs) = &mode
        && rngs.len() != tasks.len()
    {
        return Err(TrainerError::Config(InvalidValue::new(
            "rngs",
            format!("one random stream per task ({})", tasks.len()),
            rngs.len().to_string(),
        )));
    }
    let mut out: Vec<Option<Played>> = (0..tasks.len()).map(|_| None).collect();
    let mut bufs: [BatchBuffers; 2] = Default::default();
    let inner = net.valid();
    let inner_device = to_inner_device::<B>(device);
    let width = width.max(1).min(tasks.len().max(1));
    // Live episodes, kept aligned: slot, its task index, its recorded steps.
    let starts: Vec<Result<Slot, TrainerError>> = tasks[..width.min(tasks.len())]
        .par_iter()
        .map(|t| Slot::start(factory, None, t.clone(), cfg))
        .collect();
    let mut slots = starts.into_iter().collect::<Result<Vec<_>, _>>()?;
    let cap = |slots: &mut [Slot]| {
        if let Some(c) = step_cap {
            for s in slots {
                s.max_steps = s.max_steps.min(c.max(1));
            }
        }
    };
    cap(&mut slots);
    let mut ids: Vec<usize> = (0..slots.len()).collect();
    let mut recs: Vec<Vec<Recorded>> = (0..slots.len()).map(|_| Vec::new()).collect();
    let mut next = slots.len();
    while !slots.is_empty() {
        let rows: Vec<&Features> = slots.iter().map(|s| &s.features).collect();
        let InferredRows { logits, values, .. } =
            infer_rows(&inner, &mut bufs, &rows, cfg, &inner_device)?;
        let actions: Vec<ActionId> = (0..slots.len())
            .map(|r| {
                let row = &logits[r * NUM_ACTIONS..(r + 1) * NUM_ACTIONS];
                match &mut mode {
                    Mode::Greedy => greedy_action(row),
                    Mode::Sample(rngs) => sample_action(row, &mut rngs[ids[r]]).0,
                }
            })
            .collect();
        if record {
            for (r, s) in slots.iter().enumerate() {
                recs[r].push(Recorded {
                    features: s.features.clone(),
                    action: actions[r],
                    reward: 0.0,
                    value: values[r],
                });
            }
        }
        let results = step_slots(&mut slots, &actions, cfg);
        let mut restarts: Vec<(usize, Task)> = Vec::new();
        let mut done: Vec<usize> = Vec::new();
        for (r, res) in results.iter().enumerate() {
            if let Some(last) = recs[r].last_mut() {
                last.reward = res.reward;
            }
            if res.ended {
                out[ids[r]] = Some(Played {
                    outcome: outcome(&slots[r], res.success),
                    steps: std::mem::take(&mut recs[r]),
                });
                if next < tasks.len() {
                    restarts.push((r, tasks[next].clone()));
                    ids[r] = next;
                    next += 1;
                } else {
                    done.push(r);
                }
            }
        }
        restart_slots(&mut slots, &restarts, factory, cfg)?;
        cap(&mut slots);
        // Drop finished slots with no task left (from the back, so indices stay valid).
        for &r in done.iter().rev() {
            slots.swap_remove(r);
            ids.swap_remove(r);
            recs.swap_remove(r);
        }
    }
    Ok(out.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_respects_the_mask_and_greedy_takes_the_max() {
        let mut row = [crate::encode::ILLEGAL_LOGIT; NUM_ACTIONS];
        row[2] = 0.5;
        row[3] = 0.4;
        let mut rng = Rng::seed_from_u64(1);
        for _ in 0..200 {
            let (a, lp) = sample_action(&row, &mut rng);
            assert!(a == ActionId::LEFT || a == ActionId::RIGHT);
            assert!(lp < 0.0 && lp > -1.0);
        }
        assert_eq!(greedy_action(&row), ActionId::LEFT);
        let lp = log_softmax_row(&row);
        let total: f64 = lp.iter().map(|l| l.exp()).sum();
        assert!((total - 1.0).abs() < 1e-9);
    }
}
