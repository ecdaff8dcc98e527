//! How the network's weights are drawn.

use burn::module::Param;
use burn::nn::Linear;
use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use envdist_core::Rng;

use crate::config::WeightInit;

pub(super) fn uniform<B: Backend, const D: usize>(
    shape: [usize; D],
    bound: f32,
    rng: &mut Rng,
    device: &B::Device,
) -> Tensor<B, D> {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n)
        .map(|_| (rng.next_f32() * 2.0 - 1.0) * bound)
        .collect();
    Tensor::from_data(TensorData::new(v, shape), device)
}

/// A `[d_in, d_out]` weight with orthonormal columns (`d_in >= d_out`) or rows (`d_in <
/// d_out`), times `gain`: PyTorch's `orthogonal_` on the transposed (`[out, in]`) layout, so
/// each output unit's weights have norm `gain` when the layer narrows, as Stable-Baselines3
/// and CleanRL draw them. A Gaussian matrix made orthonormal by modified Gram-Schmidt in f64
/// (the signs come out as QR's with a positive diagonal, which is what PyTorch's sign
/// correction gives); plain f64 arithmetic, so the same weights on every machine.
pub(super) fn orthogonal(d_in: usize, d_out: usize, gain: f32, rng: &mut Rng) -> Vec<f32> {
    let (tall, wide) = (d_in.max(d_out), d_in.min(d_out));
    // `wide` columns of `tall` values each, column-major.
    let mut q: Vec<f64> = (0..tall * wide).map(|_| rng.normal() as f64).collect();
    for j in 0..wide {
        for k in 0..j {
            let (done, rest) = q.split_at_mut(j * tall);
            let qk = &done[k * tall..(k + 1) * tall];
            let qj = &mut rest[..tall];
            let dot: f64 = qk.iter().zip(qj.iter()).map(|(a, b)| a * b).sum();
            for (b, a) in qj.iter_mut().zip(qk) {
                *b -= dot * a;
            }
        }
        let col = &mut q[j * tall..(j + 1) * tall];
        let norm = col.iter().map(|v| v * v).sum::<f64>().sqrt().max(1e-300);
        for v in col {
            *v /= norm;
        }
    }
    let mut w = vec![0f32; d_in * d_out];
    for i in 0..d_in {
        for o in 0..d_out {
            // Column `o` of the tall matrix when the layer narrows, else column `i`.
            let v = if d_in >= d_out {
                q[o * tall + i]
            } else {
                q[i * tall + o]
            };
            w[i * d_out + o] = (v * gain as f64) as f32;
        }
    }
    w
}

/// How one layer's weights are drawn: `init`, at the layer's `role`.
#[derive(Debug, Clone, Copy)]
pub(super) enum Role {
    /// A hidden layer (ReLU after it).
    Hidden,
    /// The policy head (small: near-uniform initial actions, as PPO practice recommends).
    Policy,
    /// The value head.
    Value,
}

/// A dense (or im2col convolution) layer drawn by `init` for its `role`, zero bias.
/// Kaiming-uniform: bound `gain * sqrt(6 / d_in)`, gain 1, 0.01 (policy), 0.5 (value).
/// Orthogonal: gain sqrt(2), 0.01 (policy), 1 (value).
pub(super) fn linear<B: Backend>(
    d_in: usize,
    d_out: usize,
    role: Role,
    init: WeightInit,
    rng: &mut Rng,
    device: &B::Device,
) -> Linear<B> {
    let weight = match init {
        WeightInit::KaimingUniform => {
            let gain = match role {
                Role::Hidden => 1.0,
                Role::Policy => 0.01,
                Role::Value => 0.5,
            };
            uniform(
                [d_in, d_out],
                gain * (6.0 / d_in as f32).sqrt(),
                rng,
                device,
            )
        }
        WeightInit::Orthogonal => {
            let gain = match role {
                Role::Hidden => std::f32::consts::SQRT_2,
                Role::Policy => 0.01,
                Role::Value => 1.0,
            };
            let w = orthogonal(d_in, d_out, gain, rng);
            Tensor::from_data(TensorData::new(w, [d_in, d_out]), device)
        }
    };
    Linear {
        weight: Param::from_tensor(weight),
        bias: Some(Param::from_tensor(Tensor::zeros([d_out], device))),
    }
}
