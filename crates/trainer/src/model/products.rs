//! The network's matrix products, each contracting over at most [`GEMM_K_MAX`] values (see
//! the module docs of [`crate::model`] for why).

use burn::nn::Linear;
use burn::tensor::backend::Backend;
use burn::tensor::{Int, Tensor, TensorData};

use crate::config::CONV_STRIDE;

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
