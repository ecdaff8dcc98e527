//! The text encoder's weighted embedding bags as one kernel on the CPU backend, bit for bit the
//! plain burn operations it replaces.
//!
//! A batch's text is `T` token ids, each in one segment (a row's channel), and one weight per
//! segment; the bags are `bag[s] = w[s] * sum of table[token] over the tokens of s, in order`.
//! As burn operations ([`weighted_bags_plain`]) that is a gather of `T` table rows into a
//! `[T, width]` tensor, a zeroed `[segments, width]` tensor the rows are added into (a copy of it
//! first), and a broadcast product; backwards, the product again, a gather of `T` gradient rows
//! and a scatter-add of them into a zeroed copy of the table. At the `cpu` preset's minibatch
//! (about 215 tokens a sample at H0) those passes over `T x width` values cost about a tenth of a
//! learning step (docs/trainer.md, "The text bags in one pass"), for arithmetic a hundredth of it.
//!
//! On burn's CPU backend (`flex`, with or without autodiff) [`weighted_bags`] reads the table
//! once into the bags, and backwards adds each token's weighted gradient row straight into the
//! table's gradient: the same f32 operations in the same order (each bag starts at zero and adds
//! its tokens' rows in token order, then is multiplied by its weight; each table row of the
//! gradient starts at zero and adds `gradient row * weight` in token order, a product rounded
//! before the sum as burn's separate passes round it), so the same bits.
//! `fused_bags_are_the_plain_operations_bit_for_bit` holds it to that. On the other backends
//! (LibTorch, CUDA) it is the plain operations.
//!
//! The kernel sits behind burn's backend interface: a [`Backward`] step of burn's autodiff
//! graph, on the `flex` tensors themselves. The trainer's code is generic over the backend, and
//! Rust has no specialisation, so [`weighted_bags`] finds the CPU backend by its type id and
//! moves the tensors to and from the concrete type through `Any` (no `unsafe`).

use std::any::{Any, TypeId};
use std::sync::Arc;

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::NoCheckpointing;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind, unary};
use burn::backend::{Autodiff, Flex};
use burn::tensor::backend::Backend;
use burn::tensor::{IndexingUpdateOp, Int, Tensor, TensorData, TensorPrimitive};
use burn_flex::FlexTensor;

/// burn's CPU backend under autodiff, as the trainer learns on it.
type FlexAd = Autodiff<Flex>;

/// `[n, channels, width]` weighted bags of `table` (`[vocab, width]`): token `i` (bucket
/// `tokens[i]`) is added into segment `segments[i]` (`row * channels + channel`), and each
/// segment's sum is multiplied by `weights` (`[n, channels, 1]`). One pass on the CPU backend,
/// the plain operations elsewhere, the same numbers either way (module docs).
pub(crate) fn weighted_bags<B: Backend>(
    table: Tensor<B, 2>,
    tokens: Tensor<B, 1, Int>,
    segments: Tensor<B, 1, Int>,
    weights: Tensor<B, 3>,
) -> Tensor<B, 3> {
    let id = TypeId::of::<B>();
    if id == TypeId::of::<Flex>() {
        let out = fused_flex(cast(table), cast(tokens), cast(segments), cast(weights));
        cast(out)
    } else if id == TypeId::of::<FlexAd>() {
        let out = fused_autodiff(cast(table), cast(tokens), cast(segments), cast(weights));
        cast(out)
    } else {
        weighted_bags_plain(table, tokens, segments, weights)
    }
}

/// [`weighted_bags`] as burn operations: what every backend but the CPU one runs, and what the
/// fused kernel must equal.
pub(crate) fn weighted_bags_plain<B: Backend>(
    table: Tensor<B, 2>,
    tokens: Tensor<B, 1, Int>,
    segments: Tensor<B, 1, Int>,
    weights: Tensor<B, 3>,
) -> Tensor<B, 3> {
    let [n, channels, _] = weights.dims();
    let width = table.dims()[1];
    let emb = table.select(0, tokens);
    let bags = Tensor::<B, 2>::zeros([n * channels, width], &emb.device()).select_assign(
        0,
        segments,
        emb,
        IndexingUpdateOp::Add,
    );
    // A per-row scalar broadcast: one of the two kinds burn's CPU backend runs as vector loops.
    bags.reshape([n, channels, width]) * weights
}

/// `x` as the type `U` it is (the caller compared their type ids).
fn cast<T: 'static, U: 'static>(x: T) -> U {
    *(Box::new(x) as Box<dyn Any>)
        .downcast::<U>()
        .expect("the caller checked that the types are the same")
}

/// What a bag's forward pass read, kept for its backward pass: the token ids, their segments,
/// the segments' weights (host copies), and the table's row count.
#[derive(Debug, Clone)]
struct BagIndex {
    tokens: Arc<Vec<usize>>,
    segments: Arc<Vec<usize>>,
    weights: Arc<Vec<f32>>,
    vocab: usize,
    width: usize,
}

impl BagIndex {
    /// Read the index tensors, checking every id against its range (as burn's `select` does,
    /// with a message that says which).
    fn read(
        tokens: &FlexTensor,
        segments: &FlexTensor,
        weights: &FlexTensor,
        vocab: usize,
        width: usize,
    ) -> Self {
        let ids = |t: &FlexTensor, bound: usize, what: &str| -> Vec<usize> {
            let t = t.to_contiguous();
            t.storage::<i32>()
                .iter()
                .map(|&i| {
                    let i = usize::try_from(i).unwrap_or(usize::MAX);
                    assert!(i < bound, "text bag: {what} {i} out of range 0..{bound}");
                    i
                })
                .collect()
        };
        let weights = weights.to_contiguous().storage::<f32>().to_vec();
        let tokens = ids(tokens, vocab, "token bucket");
        let segments = ids(segments, weights.len(), "token segment");
        assert_eq!(
            tokens.len(),
            segments.len(),
            "text bag: one segment per token"
        );
        Self {
            tokens: Arc::new(tokens),
            segments: Arc::new(segments),
            weights: Arc::new(weights),
            vocab,
            width,
        }
    }

    /// The bags, `[segments, width]` values: each starts at zero, adds its tokens' table rows
    /// in token order, then is multiplied by its weight (the plain path's order).
    fn forward(&self, table: &[f32]) -> Vec<f32> {
        let w = self.width;
        let mut bags = vec![0.0f32; self.weights.len() * w];
        for (&token, &segment) in self.tokens.iter().zip(self.segments.iter()) {
            let row = &table[token * w..(token + 1) * w];
            for (b, v) in bags[segment * w..(segment + 1) * w].iter_mut().zip(row) {
                *b += *v;
            }
        }
        for (bag, &weight) in bags.chunks_exact_mut(w).zip(self.weights.iter()) {
            for b in bag {
                *b *= weight;
            }
        }
        bags
    }

    /// The table's gradient, `[vocab, width]` values, from the bags' gradient `[segments,
    /// width]`: each row starts at zero and adds `gradient row * weight` for its tokens in
    /// token order (the product rounded first, as the plain path's separate passes round it).
    fn backward(&self, grad: &[f32]) -> Vec<f32> {
        let w = self.width;
        let mut table_grad = vec![0.0f32; self.vocab * w];
        for (&token, &segment) in self.tokens.iter().zip(self.segments.iter()) {
            let weight = self.weights[segment];
            let g = &grad[segment * w..(segment + 1) * w];
            for (t, v) in table_grad[token * w..(token + 1) * w].iter_mut().zip(g) {
                let product = *v * weight;
                *t += product;
            }
        }
        table_grad
    }
}

/// A host-side `f32` tensor of `shape`.
fn flex_tensor(values: Vec<f32>, shape: [usize; 3]) -> FlexTensor {
    FlexTensor::from_data(TensorData::new(values, shape))
}

/// The fused forward on the CPU backend without autodiff (the rollout's and evaluation's
/// inference).
fn fused_flex(
    table: Tensor<Flex, 2>,
    tokens: Tensor<Flex, 1, Int>,
    segments: Tensor<Flex, 1, Int>,
    weights: Tensor<Flex, 3>,
) -> Tensor<Flex, 3> {
    let [vocab, width] = table.dims();
    let [n, channels, _] = weights.dims();
    let index = BagIndex::read(
        &tokens.into_primitive(),
        &segments.into_primitive(),
        &weights.into_primitive().tensor(),
        vocab,
        width,
    );
    let table = table.into_primitive().tensor().to_contiguous();
    let bags = index.forward(table.storage::<f32>());
    Tensor::from_primitive(TensorPrimitive::Float(flex_tensor(
        bags,
        [n, channels, width],
    )))
}

/// The bags' step in burn's autodiff graph: the table's gradient from the bags' (module docs).
#[derive(Debug)]
struct BagsBackward;

impl Backward<Flex, 1> for BagsBackward {
    type State = BagIndex;

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let index = ops.state;
        unary::<Flex, _>(ops.parents, ops.node, grads, |grad| {
            let grad = grad.to_contiguous();
            let table_grad = index.backward(grad.storage::<f32>());
            FlexTensor::from_data(TensorData::new(table_grad, [index.vocab, index.width]))
        });
    }
}

/// The fused forward on the CPU backend under autodiff, with [`BagsBackward`] as its step.
fn fused_autodiff(
    table: Tensor<FlexAd, 2>,
    tokens: Tensor<FlexAd, 1, Int>,
    segments: Tensor<FlexAd, 1, Int>,
    weights: Tensor<FlexAd, 3>,
) -> Tensor<FlexAd, 3> {
    let [vocab, width] = table.dims();
    let [n, channels, _] = weights.dims();
    // The weights are data (no gradient flows to them); only the table is differentiated.
    let index = BagIndex::read(
        &tokens.into_primitive(),
        &segments.into_primitive(),
        &weights.into_primitive().tensor().primitive,
        vocab,
        width,
    );
    let table = table.into_primitive().tensor();
    let bags = {
        let values = table.primitive.to_contiguous();
        flex_tensor(index.forward(values.storage::<f32>()), [n, channels, width])
    };
    let out = match BagsBackward
        .prepare::<NoCheckpointing>([table.node.clone()])
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(prep) => prep.finish(index, bags),
        OpsKind::UnTracked(prep) => prep.finish(bags),
    };
    Tensor::from_primitive(TensorPrimitive::Float(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use envdist_core::Rng;

    /// A random batch of bags: `n` rows of `channels` segments, some empty, some of many tokens
    /// (repeated buckets among them), weights 1/sqrt(count) or 0, and table values of both signs
    /// (negative zeros too).
    #[allow(clippy::type_complexity)]
    fn batch(
        rng: &mut Rng,
        n: usize,
        channels: usize,
        vocab: usize,
        width: usize,
    ) -> (Vec<f32>, Vec<i32>, Vec<i32>, Vec<f32>) {
        let table: Vec<f32> = (0..vocab * width)
            .map(|i| match i % 17 {
                0 => -0.0,
                _ => rng.normal() * 0.3,
            })
            .collect();
        let (mut tokens, mut segments, mut weights) = (Vec::new(), Vec::new(), Vec::new());
        for s in 0..n * channels {
            let count = [0, 1, 3, 40, 190][rng.index(5)];
            for _ in 0..count {
                tokens.push(rng.index(vocab) as i32);
                segments.push(s as i32);
            }
            weights.push(if count == 0 {
                0.0
            } else {
                1.0 / (count as f32).sqrt()
            });
        }
        if tokens.is_empty() {
            tokens.push(0);
            segments.push(0);
        }
        (table, tokens, segments, weights)
    }

    fn inputs<B: Backend>(
        (tokens, segments, weights): (&[i32], &[i32], &[f32]),
        n: usize,
        channels: usize,
        dev: &B::Device,
    ) -> (Tensor<B, 1, Int>, Tensor<B, 1, Int>, Tensor<B, 3>) {
        (
            Tensor::from_data(TensorData::new(tokens.to_vec(), [tokens.len()]), dev),
            Tensor::from_data(TensorData::new(segments.to_vec(), [segments.len()]), dev),
            Tensor::from_data(TensorData::new(weights.to_vec(), [n, channels, 1]), dev),
        )
    }

    fn bits<B: Backend, const D: usize>(t: Tensor<B, D>) -> Vec<u32> {
        t.into_data()
            .into_vec::<f32>()
            .expect("f32")
            .into_iter()
            .map(f32::to_bits)
            .collect()
    }

    /// The fused bags and the table's gradient against the plain operations, by `f32::to_bits`,
    /// at the presets' text widths, with and without autodiff.
    #[test]
    fn fused_bags_are_the_plain_operations_bit_for_bit() {
        let dev = Default::default();
        let mut rng = Rng::seed_from_u64(5);
        for (n, vocab, width) in [(1, 64, 16), (37, 1024, 32), (128, 1024, 32), (9, 4096, 64)] {
            let channels = 5;
            let (table, tokens, segments, weights) = batch(&mut rng, n, channels, vocab, width);
            let text = (&tokens[..], &segments[..], &weights[..]);

            // Inference: flex alone.
            let t =
                Tensor::<Flex, 2>::from_data(TensorData::new(table.clone(), [vocab, width]), &dev);
            let (tok, seg, w) = inputs::<Flex>(text, n, channels, &dev);
            let fused = weighted_bags(t.clone(), tok.clone(), seg.clone(), w.clone());
            let plain = weighted_bags_plain(t, tok, seg, w);
            assert_eq!(bits(fused), bits(plain), "inference, n {n}, width {width}");

            // Learning: under autodiff, the bags and the table's gradient through a loss
            // that weighs every bag value differently.
            let probe: Vec<f32> = (0..n * channels * width).map(|_| rng.normal()).collect();
            let grad_of = |fused: bool| {
                let t = Tensor::<FlexAd, 2>::from_data(
                    TensorData::new(table.clone(), [vocab, width]),
                    &dev,
                )
                .require_grad();
                let (tok, seg, w) = inputs::<FlexAd>(text, n, channels, &dev);
                let bags = if fused {
                    weighted_bags(t.clone(), tok, seg, w)
                } else {
                    weighted_bags_plain(t.clone(), tok, seg, w)
                };
                let probe = Tensor::<FlexAd, 3>::from_data(
                    TensorData::new(probe.clone(), [n, channels, width]),
                    &dev,
                );
                let loss = (bags.clone() * probe).sum();
                let grads = loss.backward();
                let g = t.grad(&grads).expect("the table has a gradient");
                (bits(bags), bits(g))
            };
            let fused = grad_of(true);
            let plain = grad_of(false);
            assert_eq!(fused.0, plain.0, "learning, bags, n {n}, width {width}");
            assert_eq!(
                fused.1, plain.1,
                "learning, table gradient, n {n}, width {width}"
            );
        }
    }

    /// Without a gradient to track (a table that is not a parameter), the fused op is only its
    /// forward pass, and gives the plain one.
    #[test]
    fn an_untracked_table_gives_the_plain_bags() {
        let dev = Default::default();
        let mut rng = Rng::seed_from_u64(6);
        let (n, channels, vocab, width) = (4, 5, 64, 8);
        let (table, tokens, segments, weights) = batch(&mut rng, n, channels, vocab, width);
        let text = (&tokens[..], &segments[..], &weights[..]);
        let t = Tensor::<FlexAd, 2>::from_data(TensorData::new(table, [vocab, width]), &dev);
        let (tok, seg, w) = inputs::<FlexAd>(text, n, channels, &dev);
        let fused = weighted_bags(t.clone(), tok.clone(), seg.clone(), w.clone());
        assert_eq!(bits(fused), bits(weighted_bags_plain(t, tok, seg, w)));
    }
}
