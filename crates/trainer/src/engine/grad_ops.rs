//! Operations on a whole network's gradients: global-norm clipping and flattening (for the
//! per-environment gradients of AES's conflict term).

use burn::module::{Module, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::tensor::Tensor;
use burn::tensor::backend::{AutodiffBackend, Backend};

use crate::backend::{host_reads_are_free, to_inner_device, to_vec};
use crate::error::TrainerError;
use crate::model::PolicyNet;

/// Sum of squared gradient entries over all parameters, then the whole gradient scaled so
/// its norm is at most `max` (burn's own clipping is per parameter). Returns the norm before
/// clipping as a one-element tensor (`None` without gradients), computed and applied on the
/// device: reading it back would synchronise with the device once per minibatch.
pub(crate) fn clip_global_norm<B: AutodiffBackend>(
    model: &PolicyNet<B>,
    grads: &mut GradientsParams,
    max: f32,
) -> Option<Tensor<B::InnerBackend, 1>> {
    struct Norm<'a, B: AutodiffBackend> {
        grads: &'a GradientsParams,
        parts: Vec<Tensor<B::InnerBackend, 1>>,
    }
    impl<B: AutodiffBackend> ModuleVisitor<B> for Norm<'_, B> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            if let Some(g) = self.grads.get::<B::InnerBackend, D>(param.id) {
                self.parts.push(g.powi_scalar(2).sum());
            }
        }
    }
    struct Scale<'a, IB: Backend> {
        grads: &'a mut GradientsParams,
        factor: Tensor<IB, 1>,
    }
    impl<B: AutodiffBackend> ModuleVisitor<B> for Scale<'_, B::InnerBackend> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            if let Some(g) = self.grads.remove::<B::InnerBackend, D>(param.id) {
                let factor = self.factor.clone().reshape([1; D]);
                self.grads.register(param.id, g.mul(factor));
            }
        }
    }
    let mut n = Norm::<B> {
        grads,
        parts: Vec::new(),
    };
    model.visit(&mut n);
    if n.parts.is_empty() {
        return None;
    }
    let norm = Tensor::cat(n.parts, 0).sum().sqrt();
    if host_reads_are_free::<B::InnerBackend>() {
        // On the CPU a read costs nothing: scale only when needed, by a plain scalar (a
        // broadcast tensor product costs a pass over every parameter, every minibatch).
        let value = to_vec(norm.clone().into_data())
            .map(|v| v[0])
            .unwrap_or(0.0);
        if value.is_finite() && value > max {
            model.visit(&mut ScaleBy::<'_> {
                grads,
                factor: max / value,
            });
        }
        return Some(norm);
    }
    // max / norm, capped at 1: unchanged below the limit (and for a zero norm, whose
    // quotient is infinite), scaled onto it above.
    let factor = norm.clone().recip().mul_scalar(max).clamp_max(1.0);
    model.visit(&mut Scale::<B::InnerBackend> { grads, factor });
    Some(norm)
}

/// Global-norm clipping by a host scalar (see [`clip_global_norm`]).
struct ScaleBy<'a> {
    grads: &'a mut GradientsParams,
    factor: f32,
}

impl<B: AutodiffBackend> ModuleVisitor<B> for ScaleBy<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
        if let Some(g) = self.grads.remove::<B::InnerBackend, D>(param.id) {
            self.grads.register(param.id, g.mul_scalar(self.factor));
        }
    }
}

/// Every parameter's gradient, flattened in the module's visiting order (zeros for parameters
/// the loss does not reach, e.g. the value head under a policy-only loss). `model` is the
/// network or one of its layers (the policy head alone).
pub(crate) fn flat_gradient<B: AutodiffBackend, M: Module<B>>(
    model: &M,
    grads: &GradientsParams,
) -> Result<Vec<f32>, TrainerError> {
    struct Flat<'a, B: AutodiffBackend> {
        grads: &'a GradientsParams,
        parts: Vec<Tensor<B::InnerBackend, 1>>,
        device: burn::tensor::Device<B::InnerBackend>,
    }
    impl<B: AutodiffBackend> ModuleVisitor<B> for Flat<'_, B> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            let n: usize = param.val().dims().iter().product();
            let g = match self.grads.get::<B::InnerBackend, D>(param.id) {
                Some(g) => g.reshape([n]),
                None => Tensor::zeros([n], &self.device),
            };
            self.parts.push(g);
        }
    }
    let mut f = Flat::<B> {
        grads,
        parts: Vec::new(),
        device: to_inner_device::<B>(&model.devices().into_iter().next().unwrap_or_default()),
    };
    model.visit(&mut f);
    to_vec(Tensor::cat(f.parts, 0).into_data())
}
