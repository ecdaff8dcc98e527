//! The policy network, generic over the burn backend (only inside this crate).
//!
//! image, `patch-mlp` encoder: frame -> `patch x patch` patches -> shared linear patch
//! embedding (ReLU) -> flatten (keeps each patch's position, as a VLM's position embedding
//! does) -> linear (ReLU).
//! image, `conv` encoder: three stride-2 convolutions (kernels `conv_kernels`, default 5, 3, 3;
//! zero padding `conv_padding`, default none; ReLU), NHWC, each a linear map over an im2col of
//! its input: the first one's im2col is built on the host ([`crate::encode`]), the others' on
//! the device as one row gather of the map ([`im2col_stride2`]); then flatten -> linear
//! (ReLU). Weights are shared across positions at every layer.
//! text: each of the five channels (instruction, observation, state, hints, rules) is a
//! hashed bag of tokens; one shared embedding matrix turns a bag into the scaled sum of its
//! tokens' embeddings (an embedding-bag lookup on token ids, never a dense `vocab`-wide
//! vector), and a learned presence vector per channel is added. An absent channel's slot is
//! multiplied by zero: it contributes nothing, and the model cannot read the absence as text.
//! fusion: concat -> linear (ReLU) -> masked action logits and a scalar value.
//!
//! Parameters are initialised from [`envdist_core::Rng`] (not burn's global RNG), so a seed
//! gives the same network on every backend. `model.init` chooses how the weights are drawn:
//! `kaiming-uniform` (the default, every record's) or `orthogonal` (Stable-Baselines3's and
//! CleanRL's PPO initialisation, for the per-sample comparison of issue #29); biases start at
//! zero either way.
//!
//! Machine independence on the CPU: burn's CPU backend multiplies matrices with the `gemm`
//! crate, which splits a contraction longer than 512 values into blocks sized from the
//! machine's L1 data cache (1,024 on a 48 KiB 12-way L1, 512 on a 32 KiB 8-way one), and the
//! block size decides the order of the floating-point sums. A contraction of at most
//! [`GEMM_K_MAX`] values is one block on every machine. So every product here contracts over
//! at most that many values, forwards and backwards: wide inputs are split into column blocks
//! ([`linear_blocked`]) and the patch embedding runs on row chunks, so its weight gradient sums
//! at most `GEMM_K_MAX` rows at a time (the convolutions run as one batched product over groups
//! of at most `GEMM_K_MAX` rows, [`linear_row_groups`]: each group's weight gradient is one
//! product, and the groups' sum a reduction in a fixed order); minibatches of at most `GEMM_K_MAX` samples (the `cpu`
//! and `tiny` presets, cloning, gradient chunks) keep the other weight gradients within it.
//! The same code then gives the same numbers on any x86-64 machine with FMA.
//!
//! Vector width: burn-flex runs `gemm` with its AVX-512 kernels where the CPU has them
//! (`x86-v4`), AVX2 elsewhere. Its microkernel adds each output's terms one fused multiply-add at
//! a time in order, whatever the lane count, so its results are the same at either width; its
//! dot-product kernels (a product with one output column, or of at most
//! [`GEMM_DOT_MAX_OUTPUTS`] outputs with both operands contiguous along the sum) add in as many
//! lanes as the vector holds, so theirs are not. The network keeps out of them: the value head
//! multiplies by its weight and a zero column ([`PolicyNet::value_of`]), and a batch too small
//! for its backward products to leave that path is padded with zero rows
//! ([`PolicyNet::forward`]). `the_networks_products_sum_each_value_in_order` checks every
//! product shape of the presets against a sum in order, on whatever machine runs it.

use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::tensor::activation::relu;
use burn::tensor::backend::Backend;
use burn::tensor::{Int, Tensor, TensorData};
use envdist_core::{NUM_ACTIONS, Rng};

use crate::config::{CONV_STRIDE, ImageEncoder, ModelConfig, WeightInit};
use crate::encode::{BatchBuffers, NUM_CHANNELS};
use crate::text_bag::weighted_bags;

/// The policy-and-value network.
#[derive(Module, Debug)]
pub struct PolicyNet<B: Backend> {
    /// The patch embedding (`patch-mlp`) or the first convolution (`conv`).
    patch: Linear<B>,
    /// The dense layer over every patch or every position of the last feature map.
    image: Linear<B>,
    /// `conv`: the second and third convolutions; empty for `patch-mlp`, which is how the
    /// forward pass tells the encoders apart.
    convs: Vec<Linear<B>>,
    text: Linear<B>,
    presence: Param<Tensor<B, 2>>,
    fuse: Linear<B>,
    policy: Linear<B>,
    value: Linear<B>,
}

/// The `conv` encoder's kernels and padding (the config's `conv_kernels` and `conv_padding`):
/// what the forward pass needs beyond the weights' shapes, which do not say the padding.
/// Carried by [`Inputs`], whose first-convolution im2col was laid out with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvGeometry {
    /// Kernel sides of the three convolutions.
    pub kernels: [usize; 3],
    /// Zeros on every side of each convolution's input.
    pub padding: usize,
}

impl ConvGeometry {
    /// The geometry `cfg` names (unused by `patch-mlp`).
    pub fn of(cfg: &ModelConfig) -> Self {
        Self {
            kernels: cfg.conv_kernels,
            padding: cfg.conv_padding,
        }
    }
}

/// A batch of encoded observations as tensors.
#[derive(Debug, Clone)]
pub struct Inputs<B: Backend> {
    /// `[n, num_patches, patch_values]`: patches (`patch-mlp`) or the first convolution's
    /// im2col (`conv`, row-major positions, each `k1 x k1 x RGB`, laid out with `conv`).
    pub patches: Tensor<B, 3>,
    /// `[T]`: every token's hash bucket.
    pub tokens: Tensor<B, 1, Int>,
    /// `[T]`: every token's `row * NUM_CHANNELS + channel`.
    pub token_segments: Tensor<B, 1, Int>,
    /// `[n, NUM_CHANNELS, 1]`: each channel's weight on its token sum.
    pub segment_weights: Tensor<B, 3>,
    /// `[n, NUM_CHANNELS, 1]`.
    pub present: Tensor<B, 3>,
    /// `[n, NUM_ACTIONS]`.
    pub mask: Tensor<B, 2>,
    /// How `patches` was laid out for `conv`, and what its later convolutions need.
    pub conv: ConvGeometry,
}

impl<B: Backend> Inputs<B> {
    /// These inputs with zero rows after the batch's own, `rows` in all: no token, no channel
    /// present, no frame, every action legal. The text's segments index the batch's own rows,
    /// so they stay as they are.
    fn padded_to(self, rows: usize) -> Self {
        let n = self.patches.dims()[0];
        let extra = rows.saturating_sub(n);
        if extra == 0 {
            return self;
        }
        let dev = self.patches.device();
        let pad3 = |t: Tensor<B, 3>| {
            let [_, a, b] = t.dims();
            Tensor::cat(vec![t, Tensor::zeros([extra, a, b], &dev)], 0)
        };
        Self {
            patches: pad3(self.patches),
            tokens: self.tokens,
            token_segments: self.token_segments,
            segment_weights: pad3(self.segment_weights),
            present: pad3(self.present),
            mask: Tensor::cat(
                vec![self.mask, Tensor::zeros([extra, NUM_ACTIONS], &dev)],
                0,
            ),
            conv: self.conv,
        }
    }
}

/// The text part of a batch (see [`Inputs`]): tokens, their segments, segment weights.
pub(crate) type TextInputs<B> = (Tensor<B, 1, Int>, Tensor<B, 1, Int>, Tensor<B, 3>);

/// Upload the text arrays of `b`.
pub(crate) fn text_from_buffers<B: Backend>(b: &BatchBuffers, device: &B::Device) -> TextInputs<B> {
    let t = b.tokens.len();
    let n = b.segment_weights.len() / NUM_CHANNELS;
    (
        Tensor::from_data(TensorData::new(b.tokens.clone(), [t]), device),
        Tensor::from_data(TensorData::new(b.token_segments.clone(), [t]), device),
        Tensor::from_data(
            TensorData::new(b.segment_weights.clone(), [n, NUM_CHANNELS, 1]),
            device,
        ),
    )
}

impl<B: Backend> Inputs<B> {
    /// Upload the buffers (copies them; the buffers stay reusable).
    pub fn from_buffers(b: &BatchBuffers, cfg: &ModelConfig, device: &B::Device) -> Self {
        let n = b.n;
        let (tokens, token_segments, segment_weights) = text_from_buffers(b, device);
        Self {
            patches: Tensor::from_data(
                TensorData::new(
                    b.patches.clone(),
                    [n, cfg.num_patches(), cfg.patch_values()],
                ),
                device,
            ),
            tokens,
            token_segments,
            segment_weights,
            present: Tensor::from_data(
                TensorData::new(b.present.clone(), [n, NUM_CHANNELS, 1]),
                device,
            ),
            mask: Tensor::from_data(TensorData::new(b.mask.clone(), [n, NUM_ACTIONS]), device),
            conv: ConvGeometry::of(cfg),
        }
    }
}

/// The longest contraction that `gemm` runs as one block on every machine (see the module
/// docs): its k-blocking never splits a contraction of at most 512 values.
pub const GEMM_K_MAX: usize = 512;

/// `gemm` runs a product of at most this many outputs (16 x 16) whose operands are both
/// contiguous along the sum as dot products in vector lanes: 8 lanes with AVX2, 16 with
/// AVX-512, so the sums' order depends on the machine. [`PolicyNet::forward`] and
/// [`PolicyNet::value_of`] keep the network's products out of that path.
pub const GEMM_DOT_MAX_OUTPUTS: usize = 256;

/// `x W + b` with the contraction split into blocks of at most [`GEMM_K_MAX`] input columns
/// (the partial products summed in a fixed order), so no product's summation order depends on
/// the machine's cache sizes.
pub(crate) fn linear_blocked<B: Backend>(layer: &Linear<B>, x: Tensor<B, 2>) -> Tensor<B, 2> {
    let [n, k] = x.dims();
    if k <= GEMM_K_MAX {
        return layer.forward(x);
    }
    let w = layer.weight.val();
    let d_out = w.dims()[1];
    let mut y: Option<Tensor<B, 2>> = None;
    for lo in (0..k).step_by(GEMM_K_MAX) {
        let hi = (lo + GEMM_K_MAX).min(k);
        let part = x
            .clone()
            .slice([0..n, lo..hi])
            .matmul(w.clone().slice([lo..hi, 0..d_out]));
        y = Some(match y {
            None => part,
            Some(acc) => acc + part,
        });
    }
    let y = y.expect("k > GEMM_K_MAX > 0 gives at least one block");
    match &layer.bias {
        Some(b) => y + b.val().reshape([1, d_out]),
        None => y,
    }
}

/// `x W + b` for `x = [rows, k]` whose rows come in frames of `per_frame` rows, as one batched
/// product over groups of whole frames, at most [`GEMM_K_MAX`] rows each (equal parts of one
/// frame when a frame alone is longer). The weight's gradient is then one product per group, each
/// contracting over at most `GEMM_K_MAX` rows, summed over the groups by a reduction whose
/// order is fixed: the same numbers on every machine. A frame's output does not depend on the
/// other frames of its batch.
pub(crate) fn linear_row_groups<B: Backend>(
    layer: &Linear<B>,
    x: Tensor<B, 2>,
    per_frame: usize,
) -> Tensor<B, 2> {
    let [rows, k] = x.dims();
    let w = layer.weight.val();
    let d_out = w.dims()[1];
    let per_frame = per_frame.max(1);
    let frames = rows / per_frame;
    let largest_divisor =
        |of: usize, most: usize| (1..=most.max(1)).rev().find(|d| of.is_multiple_of(*d));
    let group_rows = if per_frame <= GEMM_K_MAX {
        // The most whole frames that fit in GEMM_K_MAX rows and divide the batch evenly.
        let most = (GEMM_K_MAX / per_frame).min(frames);
        per_frame * largest_divisor(frames, most).unwrap_or(1)
    } else {
        // A frame longer than GEMM_K_MAX rows: groups of an equal part of one frame.
        largest_divisor(per_frame, GEMM_K_MAX).unwrap_or(1)
    };
    let groups = rows.checked_div(group_rows).unwrap_or(1);
    // Inputs wider than GEMM_K_MAX are split into column blocks, as in `linear_blocked`.
    let mut y: Option<Tensor<B, 2>> = None;
    for lo in (0..k).step_by(GEMM_K_MAX) {
        let hi = (lo + GEMM_K_MAX).min(k);
        let (xb, wb) = if k <= GEMM_K_MAX {
            (x.clone(), w.clone())
        } else {
            (
                x.clone().slice([0..rows, lo..hi]),
                w.clone().slice([lo..hi, 0..d_out]),
            )
        };
        let part = if groups <= 1 {
            xb.matmul(wb)
        } else {
            xb.reshape([groups, group_rows, hi - lo])
                .matmul(wb.unsqueeze::<3>())
                .reshape([rows, d_out])
        };
        y = Some(match y {
            None => part,
            Some(acc) => acc + part,
        });
    }
    let y = y.expect("k > 0 gives at least one block");
    match &layer.bias {
        Some(b) => y + b.val().reshape([1, d_out]),
        None => y,
    }
}

/// The im2col of a stride-2 `kernel x kernel` convolution over `x = [n, side, side, c]`
/// (NHWC) read as if `pad` rows and columns of zeros surrounded it: `[n * out * out,
/// kernel * kernel * c]`, `out = (side + 2 pad - kernel) / 2 + 1`, each row one output
/// position's receptive field in `(ky, kx, channel)` order.
///
/// One row gather: the map as `[n * side * side + 1, c]` rows (the last one zeros, which every
/// tap outside the map reads), and one index per tap of every output position. burn's autodiff
/// differentiates it as one scatter-add of whole rows, in index order, so the gradient is the
/// same sum in the same order on every machine. (Cutting the taps out as strided slices and
/// concatenating them, as a first version did, spent more time copying strided views than in
/// the products: docs/trainer-log.md.)
pub(crate) fn im2col_stride2<B: Backend>(
    x: Tensor<B, 4>,
    kernel: usize,
    pad: usize,
) -> Tensor<B, 2> {
    let [n, side, _, c] = x.dims();
    let out = (side + 2 * pad - kernel) / CONV_STRIDE + 1;
    let rows = n * side * side;
    let dev = x.device();
    let mut idx: Vec<i32> = Vec::with_capacity(n * out * out * kernel * kernel);
    for b in 0..n {
        for oy in 0..out {
            for ox in 0..out {
                for ky in 0..kernel {
                    for kx in 0..kernel {
                        // Coordinates in the unpadded map; a tap in the padding wraps past
                        // `side` and reads the zero row.
                        let (y, xx) = (
                            (oy * CONV_STRIDE + ky).wrapping_sub(pad),
                            (ox * CONV_STRIDE + kx).wrapping_sub(pad),
                        );
                        idx.push(if y < side && xx < side {
                            ((b * side + y) * side + xx) as i32
                        } else {
                            rows as i32
                        });
                    }
                }
            }
        }
    }
    let len = idx.len();
    let idx = Tensor::<B, 1, Int>::from_data(TensorData::new(idx, [len]), &dev);
    let flat = Tensor::cat(vec![x.reshape([rows, c]), Tensor::zeros([1, c], &dev)], 0);
    flat.select(0, idx)
        .reshape([n * out * out, kernel * kernel * c])
}

fn uniform<B: Backend, const D: usize>(
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
fn orthogonal(d_in: usize, d_out: usize, gain: f32, rng: &mut Rng) -> Vec<f32> {
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
enum Role {
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
fn linear<B: Backend>(
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

impl<B: Backend> PolicyNet<B> {
    /// A freshly initialised network.
    pub fn init(cfg: &ModelConfig, seed: u64, device: &B::Device) -> Self {
        let mut rng = Rng::derive(seed, 0x6e6e);
        let init = cfg.init;
        let fused_in = cfg.image_dim + NUM_CHANNELS * cfg.text_dim;
        let (patch, convs, image) = match cfg.encoder {
            ImageEncoder::PatchMlp => {
                let patch = linear(
                    cfg.patch_values(),
                    cfg.patch_dim,
                    Role::Hidden,
                    init,
                    &mut rng,
                    device,
                );
                let image = linear(
                    cfg.num_patches() * cfg.patch_dim,
                    cfg.image_dim,
                    Role::Hidden,
                    init,
                    &mut rng,
                    device,
                );
                (patch, Vec::new(), image)
            }
            ImageEncoder::Conv => {
                let [c1, c2, c3] = cfg.conv_channels;
                let [_, k2, k3] = cfg.conv_kernels;
                let side = cfg.conv_sides().expect("a validated conv config")[2];
                let patch = linear(cfg.patch_values(), c1, Role::Hidden, init, &mut rng, device);
                let convs = vec![
                    linear(k2 * k2 * c1, c2, Role::Hidden, init, &mut rng, device),
                    linear(k3 * k3 * c2, c3, Role::Hidden, init, &mut rng, device),
                ];
                let image = linear(
                    side * side * c3,
                    cfg.image_dim,
                    Role::Hidden,
                    init,
                    &mut rng,
                    device,
                );
                (patch, convs, image)
            }
        };
        Self {
            patch,
            image,
            convs,
            // An embedding matrix (rows are looked up by bag weights, so no bias) with unit-
            // variance entries, as embeddings are usually initialised: a bag's mean then has
            // the same order of magnitude as the image features, so text is heard from the
            // first update.
            text: Linear {
                weight: Param::from_tensor(uniform(
                    [cfg.vocab, cfg.text_dim],
                    3f32.sqrt(),
                    &mut rng,
                    device,
                )),
                bias: None,
            },
            presence: Param::from_tensor(uniform(
                [NUM_CHANNELS, cfg.text_dim],
                0.1,
                &mut rng,
                device,
            )),
            fuse: linear(fused_in, cfg.hidden, Role::Hidden, init, &mut rng, device),
            policy: linear(
                cfg.hidden,
                NUM_ACTIONS,
                Role::Policy,
                init,
                &mut rng,
                device,
            ),
            value: linear(cfg.hidden, 1, Role::Value, init, &mut rng, device),
        }
    }

    /// Masked action logits `[n, NUM_ACTIONS]` and values `[n]`.
    ///
    /// A batch of fewer than [`PolicyNet::rows_for_in_order_products`] rows runs with zero rows
    /// after its own (their outputs cut off again): a backward pass over so few rows would
    /// multiply the output gradient by a transposed weight in `gemm`'s dot-product kernels (at
    /// most 16 x 16 outputs), whose sums depend on the machine's vector width. Every row's
    /// outputs depend on that row alone, so the padding moves no value.
    pub fn forward(&self, x: Inputs<B>) -> (Tensor<B, 2>, Tensor<B, 1>) {
        let n = x.patches.dims()[0];
        let rows = self.rows_for_in_order_products();
        let x = if n < rows { x.padded_to(rows) } else { x };
        let (h, mask) = self.trunk(x);
        let logits = self.policy_logits(h.clone(), mask);
        let value = self.value_of(h);
        if n < rows {
            (logits.narrow(0, 0, n), value.narrow(0, 0, n))
        } else {
            (logits, value)
        }
    }

    /// The fewest rows a batch needs for every product of its backward pass to take `gemm`'s
    /// microkernel, which adds each value's terms in order: `gemm` runs a product of at most
    /// [`GEMM_DOT_MAX_OUTPUTS`] outputs whose operands are both contiguous along the sum (an
    /// output gradient times a transposed weight) as dot products in vector lanes, so a layer
    /// with `d` inputs needs more than `GEMM_DOT_MAX_OUTPUTS / d` rows.
    pub fn rows_for_in_order_products(&self) -> usize {
        let narrowest = [
            &self.patch,
            &self.image,
            &self.fuse,
            &self.policy,
            &self.value,
        ]
        .into_iter()
        .chain(&self.convs)
        .map(|layer| layer.weight.dims()[0])
        .min()
        .unwrap_or(1)
        .max(1);
        GEMM_DOT_MAX_OUTPUTS / narrowest + 1
    }

    /// The fused features `h` (`[n, hidden]`, what both heads read) and the action mask
    /// (`[n, NUM_ACTIONS]`, moved out of `x`).
    pub fn trunk(&self, x: Inputs<B>) -> (Tensor<B, 2>, Tensor<B, 2>) {
        let n = x.patches.dims()[0];
        let img = if self.convs.is_empty() {
            self.patch_mlp_image(x.patches)
        } else {
            self.conv_image(x.patches, x.conv)
        };
        // Embedding bag: look up each token's row, add it into its (row, channel) segment,
        // then weigh each segment's sum.
        let table = self.text.weight.val();
        let td = table.dims()[1];
        let t = weighted_bags(table, x.tokens, x.token_segments, x.segment_weights);
        // Shapes chosen so each broadcast is a shared row or a per-row scalar, the two
        // broadcasts burn's CPU backend runs as vector loops (others go element by element).
        let t =
            t.reshape([n, NUM_CHANNELS * td]) + self.presence.val().reshape([1, NUM_CHANNELS * td]);
        let t = t.reshape([n, NUM_CHANNELS, td]) * x.present;
        let t = t.reshape([n, NUM_CHANNELS * td]);
        let h = relu(linear_blocked(&self.fuse, Tensor::cat(vec![img, t], 1)));
        (h, x.mask)
    }

    /// `patch-mlp`: image features `[n, image_dim]` of patches `[n, num_patches, patch_values]`.
    fn patch_mlp_image(&self, patches: Tensor<B, 3>) -> Tensor<B, 2> {
        let [n, np, pv] = patches.dims();
        // Patches as `[rows, pv]` matrices of at most GEMM_K_MAX rows (whole frames each):
        // few large products, and a weight gradient that never sums more than GEMM_K_MAX rows
        // in one product (see the module docs).
        let frames = (GEMM_K_MAX / np).max(1);
        let flat = patches.reshape([n * np, pv]);
        let chunks: Vec<Tensor<B, 2>> = (0..n)
            .step_by(frames)
            .map(|lo| {
                let hi = (lo + frames).min(n);
                relu(
                    self.patch
                        .forward(flat.clone().slice([lo * np..hi * np, 0..pv])),
                )
            })
            .collect();
        let p = if chunks.len() == 1 {
            chunks.into_iter().next().expect("one chunk")
        } else {
            Tensor::cat(chunks, 0)
        };
        let pd = p.dims()[1];
        relu(linear_blocked(&self.image, p.reshape([n, np * pd])))
    }

    /// `conv`: image features `[n, image_dim]` of the first convolution's im2col
    /// `[n, side * side, k1 * k1 * 3]`, laid out with `geometry`.
    fn conv_image(&self, cols: Tensor<B, 3>, geometry: ConvGeometry) -> Tensor<B, 2> {
        let ConvGeometry {
            kernels,
            padding: pad,
        } = geometry;
        let [n, positions, values] = cols.dims();
        let mut side = positions.isqrt();
        debug_assert_eq!(side * side, positions, "a square first feature map");
        let mut fmap = relu(linear_row_groups(
            &self.patch,
            cols.reshape([n * positions, values]),
            positions,
        ));
        for (conv, k) in self.convs.iter().zip(&kernels[1..]) {
            let c = fmap.dims()[1];
            let out = (side + 2 * pad - k) / CONV_STRIDE + 1;
            let cols = im2col_stride2(fmap.reshape([n, side, side, c]), *k, pad);
            fmap = relu(linear_row_groups(conv, cols, out * out));
            side = out;
        }
        let c = fmap.dims()[1];
        relu(linear_blocked(
            &self.image,
            fmap.reshape([n, side * side * c]),
        ))
    }

    /// Masked action logits from the fused features `h` (see [`PolicyNet::trunk`]).
    pub fn policy_logits(&self, h: Tensor<B, 2>, mask: Tensor<B, 2>) -> Tensor<B, 2> {
        self.policy.forward(h) + mask
    }

    /// The policy head: the last linear layer, fused features to action logits.
    pub fn policy_head(&self) -> &Linear<B> {
        &self.policy
    }

    /// The value head: the last linear layer, fused features to the value.
    pub fn value_head(&self) -> &Linear<B> {
        &self.value
    }

    /// The value `[n]` of fused features `h` (see [`PolicyNet::trunk`]).
    ///
    /// The product runs with the value weight and a zero column beside it: a product with one
    /// output column takes `gemm`'s dot-product kernels, which sum in as many lanes as the
    /// machine's vector unit holds (8 with AVX2, 16 with AVX-512), so its bits would depend on
    /// the machine; with two columns it takes the microkernel every other layer's forward
    /// product takes, which adds each value's terms one fused multiply-add at a time in order
    /// (the module docs, "Vector width").
    pub fn value_of(&self, h: Tensor<B, 2>) -> Tensor<B, 1> {
        let n = h.dims()[0];
        let w = self.value.weight.val();
        let two_columns = Tensor::cat(vec![w.clone(), w.zeros_like()], 1);
        let y = h.matmul(two_columns).slice([0..n, 0..1]);
        let y = match &self.value.bias {
            Some(b) => y + b.val().reshape([1, 1]),
            None => y,
        };
        y.reshape([n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every product shape the presets' networks run, forwards and backwards, at the row counts
    /// the trainer reaches, against each value's terms added one fused multiply-add at a time in
    /// order: what `gemm`'s microkernel does at any vector width, and what makes the records the
    /// same on machines with and without AVX-512 (module docs, "Vector width"). On a machine
    /// whose `gemm` took its lane-summing dot-product kernels for one of them, this fails.
    #[test]
    fn the_networks_products_sum_each_value_in_order() {
        use burn::backend::Flex;
        let dev = Default::default();
        let mut rng = Rng::seed_from_u64(1);
        // `lhs` `[m, k]` (or the transpose of a `[k, m]` tensor) times `rhs` `[k, n]` (or the
        // transpose of an `[n, k]` one), by burn and in order.
        let mut check = |m: usize, k: usize, n: usize, lhs_t: bool, rhs_t: bool, what: &str| {
            let a: Vec<f32> = (0..m * k).map(|_| rng.normal()).collect();
            let b: Vec<f32> = (0..k * n).map(|_| rng.normal()).collect();
            // `[rows, cols]` values as given, or as the transposed view of a `[cols, rows]`
            // tensor (how a backward pass reads a weight or an input).
            let tensor = |v: &[f32], rows: usize, cols: usize, transposed: bool| {
                if transposed {
                    let mut t = vec![0.0f32; v.len()];
                    for r in 0..rows {
                        for c in 0..cols {
                            t[c * rows + r] = v[r * cols + c];
                        }
                    }
                    Tensor::<Flex, 2>::from_data(TensorData::new(t, [cols, rows]), &dev).transpose()
                } else {
                    Tensor::<Flex, 2>::from_data(TensorData::new(v.to_vec(), [rows, cols]), &dev)
                }
            };
            let got = tensor(&a, m, k, lhs_t)
                .matmul(tensor(&b, k, n, rhs_t))
                .into_data()
                .into_vec::<f32>()
                .expect("f32");
            for i in 0..m {
                for j in 0..n {
                    let term = |l: usize| (a[i * k + l], b[l * n + j]);
                    let acc = if k <= 2 {
                        // Sums of one or two terms take `gemm`'s scalar path (the same code on
                        // every machine), which rounds each product before adding.
                        (0..k).fold(0.0f32, |acc, l| {
                            let (x, y) = term(l);
                            x * y + acc
                        })
                    } else {
                        (0..k).fold(0.0f32, |acc, l| {
                            let (x, y) = term(l);
                            x.mul_add(y, acc)
                        })
                    };
                    assert_eq!(
                        got[i * n + j].to_bits(),
                        acc.to_bits(),
                        "{what}: [{m}, {k}] x [{k}, {n}] (lhs transposed {lhs_t}, rhs {rhs_t}), value ({i}, {j})"
                    );
                }
            }
        };
        let mut conv = ModelConfig::cpu();
        conv.encoder = ImageEncoder::Conv;
        for (name, cfg) in [
            ("tiny", ModelConfig::tiny()),
            ("cpu", ModelConfig::cpu()),
            ("gpu", ModelConfig::gpu()),
            ("cpu conv", conv),
        ] {
            let net = PolicyNet::<Flex>::init(&cfg, 1, &dev);
            let fewest = net.rows_for_in_order_products();
            let layers = [&net.patch, &net.image, &net.fuse, &net.policy, &net.value]
                .into_iter()
                .chain(&net.convs);
            for layer in layers {
                let [d_in, d_out] = layer.weight.dims();
                // The value head runs with a zero column beside its weight.
                let d_out = d_out.max(2);
                // Wide inputs run in column blocks of at most GEMM_K_MAX.
                for k in [d_in.min(GEMM_K_MAX), d_in % GEMM_K_MAX]
                    .into_iter()
                    .filter(|&k| k > 0)
                {
                    for m in [fewest, fewest + 1, 16, 128, GEMM_K_MAX] {
                        check(m, k, d_out, false, false, &format!("{name}, forward"));
                        check(m, d_out, k, false, true, &format!("{name}, input gradient"));
                        check(
                            k,
                            m,
                            d_out,
                            true,
                            false,
                            &format!("{name}, weight gradient"),
                        );
                    }
                }
            }
        }
    }

    /// `W^T W` (narrowing layer) or `W W^T` (widening one) is `gain^2` times the identity, as
    /// PyTorch's `orthogonal_` gives on the `[out, in]` layout; and a seed draws the same
    /// weights twice.
    #[test]
    fn orthogonal_weights_have_orthonormal_columns_or_rows() {
        for (d_in, d_out) in [(48, 16), (16, 48), (7, 7), (256, 4), (1, 3)] {
            let gain = 1.5f64;
            let w = orthogonal(d_in, d_out, gain as f32, &mut Rng::seed_from_u64(3));
            assert_eq!(
                w,
                orthogonal(d_in, d_out, gain as f32, &mut Rng::seed_from_u64(3))
            );
            let at = |i: usize, o: usize| w[i * d_out + o] as f64;
            let narrow = d_in >= d_out;
            let (units, len) = if narrow { (d_out, d_in) } else { (d_in, d_out) };
            for a in 0..units {
                for b in 0..units {
                    let dot: f64 = (0..len)
                        .map(|k| {
                            if narrow {
                                at(k, a) * at(k, b)
                            } else {
                                at(a, k) * at(b, k)
                            }
                        })
                        .sum();
                    let want = if a == b { gain * gain } else { 0.0 };
                    assert!((dot - want).abs() < 1e-5, "{d_in}x{d_out}: ({a},{b}) {dot}");
                }
            }
        }
    }
}
