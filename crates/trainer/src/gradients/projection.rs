//! The seeded random projection of flattened gradients, and which span of the flattened
//! parameters a gradient covers.

use std::ops::Range;

use burn::module::{Module, ModuleVisitor, Param, ParamId};
use burn::tensor::Tensor;
use burn::tensor::backend::Backend;
use envdist_core::Rng;
use rayon::prelude::*;

use super::{GradientParams, ProjectionKind};
use crate::model::PolicyNet;

/// Ids of every float parameter of `module`, in visiting (= flattening) order, with sizes.
fn param_layout<B: Backend, M: Module<B>>(module: &M) -> Vec<(ParamId, usize)> {
    struct Layout(Vec<(ParamId, usize)>);
    impl<B: Backend> ModuleVisitor<B> for Layout {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            self.0.push((param.id, param.val().dims().iter().product()));
        }
    }
    let mut l = Layout(Vec::new());
    module.visit(&mut l);
    l.0
}

/// Where the gradient of `params` sits in the flattened gradient of every parameter (the
/// policy head's parameters are contiguous in the flattening order).
pub(crate) fn param_range<B: Backend>(net: &PolicyNet<B>, params: GradientParams) -> Range<usize> {
    let all = param_layout(net);
    let total: usize = all.iter().map(|(_, n)| n).sum();
    match params {
        GradientParams::All => 0..total,
        GradientParams::PolicyHead => {
            let head = param_layout(net.policy_head());
            let len: usize = head.iter().map(|(_, n)| n).sum();
            let mut start = 0;
            for (id, n) in &all {
                if head.first().is_some_and(|(h, _)| h == id) {
                    break;
                }
                start += n;
            }
            start..start + len
        }
    }
}

/// Rows of `R` generated per block (each block from its own derived stream).
const BLOCK: usize = 256;

/// Fill `out` (`rows x dim`) with projection rows starting at row block `block`.
fn projection_block(kind: ProjectionKind, seed: u64, block: usize, dim: usize, out: &mut [f32]) {
    let mut rng = Rng::derive(seed ^ 0x5052_4f4a, block as u64);
    let s = 1.0 / (dim as f32).sqrt();
    match kind {
        ProjectionKind::Rademacher => {
            for chunk in out.chunks_mut(64) {
                let bits = rng.next_u64();
                for (k, v) in chunk.iter_mut().enumerate() {
                    *v = if bits >> k & 1 == 1 { s } else { -s };
                }
            }
        }
        ProjectionKind::Gaussian => {
            for v in out.iter_mut() {
                *v = rng.normal() * s;
            }
        }
    }
}

/// Project each row of `grads` (all of the same length `P`) to `dim` values: `g R`.
/// Returns row-major `grads.len() x dim`.
pub fn project(grads: &[Vec<f32>], dim: usize, kind: ProjectionKind, seed: u64) -> Vec<f32> {
    let p = grads.first().map_or(0, Vec::len);
    let mut out = vec![0.0f32; grads.len() * dim];
    let mut block = vec![0.0f32; BLOCK * dim];
    for (b, start) in (0..p).step_by(BLOCK).enumerate() {
        let rows = BLOCK.min(p - start);
        projection_block(kind, seed, b, dim, &mut block[..rows * dim]);
        let block = &block;
        out.par_chunks_mut(dim.max(1))
            .zip(grads.par_iter())
            .for_each(|(o, g)| {
                for r in 0..rows {
                    let x = g[start + r];
                    if x == 0.0 {
                        continue;
                    }
                    for (oj, rj) in o.iter_mut().zip(&block[r * dim..(r + 1) * dim]) {
                        *oj += x * rj;
                    }
                }
            });
    }
    out
}
