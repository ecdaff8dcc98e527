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
//! CleanRL's PPO initialisation, for the per-sample comparison with them: docs/trainer.md); biases start at
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

mod init;
mod products;
#[cfg(test)]
mod tests;

use crate::config::{CONV_STRIDE, ImageEncoder, ModelConfig, NUM_CHANNELS};
use crate::encode::BatchBuffers;
use crate::text_bag::weighted_bags;
use init::{Role, linear, uniform};
pub use products::{GEMM_DOT_MAX_OUTPUTS, GEMM_K_MAX};
pub(crate) use products::{im2col_stride2, linear_blocked, linear_row_groups};

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
