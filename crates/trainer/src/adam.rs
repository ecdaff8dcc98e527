//! Adam in one pass over each parameter, bit for bit burn's [`Adam`] as the trainer configures
//! it (no weight decay, no AMSGrad).
//!
//! burn's Adam runs its step as a dozen tensor operations per parameter (the two moments, their
//! bias corrections, the square root, the quotient, the learning rate, the subtraction), each a
//! pass over the parameter and most a new buffer; between two minibatches that step runs on one
//! core while the other waits (docs/trainer.md, "Minibatch shards"). On the CPU backends this
//! one reads the parameter, its gradient and its moments once, does the same `f32` operations
//! in the same order for each value (so the same roundings: a value's result depends on its own
//! inputs alone), and splits long parameters across the threads, which cannot change a value
//! for the same reason. Its state is burn's [`AdamState`], so optimizer records (checkpoints'
//! `optimizer-*.mpk`) are the same files either way. On the other backends (LibTorch, CUDA) it
//! is burn's Adam.
use burn::optim::SimpleOptimizer;
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{Adam, AdamConfig, AdamState, AdaptiveMomentumState, LearningRate};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Tensor, TensorData};
use rayon::prelude::*;

use crate::model::PolicyNet;

/// Adam's decay of the first moment (burn's default).
const BETA_1: f32 = 0.9;
/// Adam's decay of the second moment (burn's default).
const BETA_2: f32 = 0.999;
/// Adam's epsilon: 1e-5, SB3's and CleanRL's choice for PPO (burn's default is 1e-5 too).
const EPSILON: f32 = 1e-5;

/// The trainer's Adam settings, as burn's config (its fields are private, hence the constants).
pub(crate) fn adam_config() -> AdamConfig {
    AdamConfig::new()
        .with_beta_1(BETA_1)
        .with_beta_2(BETA_2)
        .with_epsilon(EPSILON)
}

/// Values a thread takes at once when a parameter is split across the threads: below two of
/// these the parameter is stepped on one thread (a thread's start costs more than it saves).
const CHUNK: usize = 16 * 1024;

/// Adam as [`adam_config`] sets it, in one pass on flex (module header).
#[derive(Clone)]
pub(crate) struct OnePassAdam {
    beta_1: f32,
    beta_2: f32,
    epsilon: f32,
    /// burn's own, for device backends.
    plain: Adam,
}

impl OnePassAdam {
    pub(crate) fn new() -> Self {
        Self {
            beta_1: BETA_1,
            beta_2: BETA_2,
            epsilon: EPSILON,
            plain: adam_config().build(),
        }
    }
}

/// Whether [`OnePassAdam`] steps `B`'s parameters in its own loop: on flex only, whose
/// operations are the plain f32 loops that loop repeats. LibTorch's may compute otherwise (a
/// scalar in double precision), and a device's reads wait for its queue.
fn steps_in_one_pass<B: Backend>() -> bool {
    std::any::TypeId::of::<B>() == std::any::TypeId::of::<burn::backend::Flex>()
}

/// A float tensor's values (the trainer's tensors are all `f32`).
fn values<B: Backend, const D: usize>(t: Tensor<B, D>) -> Vec<f32> {
    t.into_data()
        .into_vec::<f32>()
        .expect("the trainer's parameters, gradients and moments are f32")
}

impl<B: Backend> SimpleOptimizer<B> for OnePassAdam {
    type State<const D: usize> = AdamState<B, D>;

    fn step<const D: usize>(
        &self,
        lr: LearningRate,
        tensor: Tensor<B, D>,
        grad: Tensor<B, D>,
        state: Option<Self::State<D>>,
    ) -> (Tensor<B, D>, Option<Self::State<D>>) {
        if !steps_in_one_pass::<B>() {
            return self.plain.step(lr, tensor, grad, state);
        }
        let device = tensor.device();
        let shape = tensor.shape();
        let mut param = values(tensor);
        let grad = values(grad);
        // burn's first step starts the moments from the gradient alone (not from zeros times
        // beta, whose sums can differ in the sign of a zero); later steps decay them.
        let (time, mut m, mut v, first) = match state {
            Some(s) => {
                let s = s.momentum;
                (s.time + 1, values(s.moment_1), values(s.moment_2), false)
            }
            None => (1, vec![0.0; grad.len()], vec![0.0; grad.len()], true),
        };
        // The scalars exactly as burn computes them, in f32.
        let (b1, b2) = (self.beta_1, self.beta_2);
        let (f1, f2) = (1.0 - b1, 1.0 - b2);
        let t = time as i32;
        let bias_correction2_sqrt = (1.0 - b2.powi(t)).sqrt();
        let combined = bias_correction2_sqrt / (1.0 - b1.powi(t));
        let eps = self.epsilon * bias_correction2_sqrt;
        // burn multiplies by the learning rate as a scalar of the tensor's type.
        let lr = lr as f32;
        let step = |p: &mut [f32], m: &mut [f32], v: &mut [f32], g: &[f32]| {
            for (((p, m), v), &g) in p.iter_mut().zip(m).zip(v).zip(g) {
                if first {
                    *m = g * f1;
                    *v = (g * g) * f2;
                } else {
                    *m = *m * b1 + g * f1;
                    *v = *v * b2 + (g * g) * f2;
                }
                let update = (*m * combined) / (v.sqrt() + eps);
                *p -= update * lr;
            }
        };
        if param.len() >= 2 * CHUNK {
            param
                .par_chunks_mut(CHUNK)
                .zip(m.par_chunks_mut(CHUNK))
                .zip(v.par_chunks_mut(CHUNK))
                .zip(grad.par_chunks(CHUNK))
                .for_each(|(((p, m), v), g)| step(p, m, v, g));
        } else {
            step(&mut param, &mut m, &mut v, &grad);
        }
        let tensor = |values: Vec<f32>| {
            Tensor::<B, D>::from_data(TensorData::new(values, shape.clone()), &device)
        };
        let state = AdamState::new(AdaptiveMomentumState::new(time, tensor(m), tensor(v)));
        (tensor(param), Some(state))
    }

    fn to_device<const D: usize>(state: Self::State<D>, device: &B::Device) -> Self::State<D> {
        <Adam as SimpleOptimizer<B>>::to_device(state, device)
    }
}

/// The trainer's optimizer: Adam, stepped in one pass on flex ([`OnePassAdam`]).
pub(crate) type TrainerAdam<B> = OptimizerAdaptor<OnePassAdam, PolicyNet<B>, B>;

/// A fresh [`TrainerAdam`].
pub(crate) fn adam<B: AutodiffBackend>() -> TrainerAdam<B> {
    OptimizerAdaptor::from(OnePassAdam::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use envdist_core::Rng;

    type B = <crate::backend::CpuB as burn::tensor::backend::AutodiffBackend>::InnerBackend;

    /// Three steps of each on the same parameters and gradients, at shapes below and above the
    /// threads' split, with zeros and negative zeros among the gradients, and a learning rate
    /// that changes between steps: every parameter and moment bit for bit burn's.
    #[test]
    fn one_pass_adam_is_burns_adam_bit_for_bit() {
        // The comparison below means something only if this backend takes the one-pass loop.
        assert!(steps_in_one_pass::<B>());
        let device = Default::default();
        let ours = OnePassAdam::new();
        let burns = adam_config().build();
        let mut rng = Rng::derive(7, 0xada);
        for len in [1, 3, 1000, 2 * CHUNK + 5, 5 * CHUNK] {
            let mut draw = |zeros: bool| -> Tensor<B, 2> {
                let v: Vec<f32> = (0..len)
                    .map(|i| match (zeros, i % 7) {
                        (true, 0) => 0.0,
                        (true, 1) => -0.0,
                        _ => (rng.next_f64() as f32 - 0.5) * 2.0,
                    })
                    .collect();
                Tensor::from_data(TensorData::new(v, [1, len]), &device)
            };
            let (mut p_ours, mut p_burn) = {
                let p = draw(false);
                (p.clone(), p)
            };
            let (mut s_ours, mut s_burn) = (None, None);
            for (k, lr) in [5e-4, 3e-4, 1e-3].into_iter().enumerate() {
                let g = draw(k != 1);
                (p_ours, s_ours) = ours.step(lr, p_ours, g.clone(), s_ours);
                (p_burn, s_burn) = burns.step(lr, p_burn, g, s_burn);
                let bits = |t: &Tensor<B, 2>| {
                    values(t.clone())
                        .iter()
                        .map(|x| x.to_bits())
                        .collect::<Vec<_>>()
                };
                let (a, b) = (s_ours.as_ref().unwrap(), s_burn.as_ref().unwrap());
                assert_eq!(a.momentum.time, b.momentum.time);
                assert_eq!(
                    bits(&p_ours),
                    bits(&p_burn),
                    "parameters, len {len}, step {k}"
                );
                assert_eq!(
                    bits(&a.momentum.moment_1),
                    bits(&b.momentum.moment_1),
                    "first moment, len {len}, step {k}"
                );
                assert_eq!(
                    bits(&a.momentum.moment_2),
                    bits(&b.momentum.moment_2),
                    "second moment, len {len}, step {k}"
                );
            }
        }
    }
}
