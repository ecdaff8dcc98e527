//! The network's numbers: blocked and grouped products, the convolutions, thread-count and
//! shard independence.

use super::*;

#[test]
fn blocked_products_equal_the_plain_ones_and_rows_do_not_depend_on_their_batch() {
    use burn::tensor::{Tensor, TensorData};
    type B = crate::backend::CpuB;
    let dev = Default::default();
    let mut rng = envdist_core::Rng::seed_from_u64(3);
    let layer = burn::nn::Linear::<B> {
        weight: burn::module::Param::from_tensor(Tensor::from_data(
            TensorData::new(
                (0..1100 * 7).map(|_| rng.normal()).collect::<Vec<f32>>(),
                [1100, 7],
            ),
            &dev,
        )),
        bias: Some(burn::module::Param::from_tensor(Tensor::from_data(
            TensorData::new((0..7).map(|_| rng.normal()).collect::<Vec<f32>>(), [7]),
            &dev,
        ))),
    };
    let x = Tensor::<B, 2>::from_data(
        TensorData::new(
            (0..5 * 1100).map(|_| rng.normal()).collect::<Vec<f32>>(),
            [5, 1100],
        ),
        &dev,
    );
    let blocked: Vec<f32> = crate::model::linear_blocked(&layer, x.clone())
        .into_data()
        .to_vec()
        .unwrap();
    let plain: Vec<f32> = layer.forward(x).into_data().to_vec().unwrap();
    for (a, b) in blocked.iter().zip(&plain) {
        assert!((a - b).abs() < 1e-3 * (1.0 + b.abs()), "{a} vs {b}");
    }
    // The patch embedding and the convolutions run on groups of whole frames: a frame's output
    // does not depend on which (or how many) other frames share its batch.
    for encoder in [ImageEncoder::PatchMlp, ImageEncoder::Conv] {
        let cfg = ModelConfig {
            encoder,
            ..ModelConfig::cpu()
        };
        let net = crate::model::PolicyNet::<B>::init(&cfg, 1, &dev);
        let frames = |n: usize, seed: u64| {
            let mut r = envdist_core::Rng::seed_from_u64(seed);
            (0..n * cfg.num_patches() * cfg.patch_values())
                .map(|_| r.next_f32())
                .collect::<Vec<f32>>()
        };
        let image = |data: Vec<f32>, n: usize| -> Vec<f32> {
            let x = crate::model::Inputs::<B> {
                patches: Tensor::from_data(
                    TensorData::new(data, [n, cfg.num_patches(), cfg.patch_values()]),
                    &dev,
                ),
                tokens: Tensor::from_data(TensorData::new(Vec::<i32>::new(), [0]), &dev),
                token_segments: Tensor::from_data(TensorData::new(Vec::<i32>::new(), [0]), &dev),
                segment_weights: Tensor::zeros([n, crate::config::NUM_CHANNELS, 1], &dev),
                present: Tensor::zeros([n, crate::config::NUM_CHANNELS, 1], &dev),
                mask: Tensor::zeros([n, envdist_core::NUM_ACTIONS], &dev),
                conv: crate::model::ConvGeometry::of(&cfg),
            };
            net.trunk(x).0.into_data().to_vec().unwrap()
        };
        let many = frames(70, 5);
        let first_alone = image(many[..cfg.num_patches() * cfg.patch_values()].to_vec(), 1);
        let in_batch = image(many, 70);
        assert_eq!(
            first_alone,
            in_batch[..cfg.hidden].to_vec(),
            "{}",
            encoder.name()
        );
    }
}

/// A plain stride-2 convolution without padding, one output at a time, NHWC in and out.
fn naive_conv(
    x: &[f32],
    n: usize,
    side: usize,
    c: usize,
    k: usize,
    w: &[f32],
    d: usize,
) -> Vec<f32> {
    let out = (side - k) / 2 + 1;
    let mut y = vec![0.0f32; n * out * out * d];
    for b in 0..n {
        for oy in 0..out {
            for ox in 0..out {
                for o in 0..d {
                    let mut acc = 0.0f64;
                    for ky in 0..k {
                        for kx in 0..k {
                            for ch in 0..c {
                                let xi = ((b * side + 2 * oy + ky) * side + 2 * ox + kx) * c + ch;
                                let wi = ((ky * k + kx) * c + ch) * d + o;
                                acc += x[xi] as f64 * w[wi] as f64;
                            }
                        }
                    }
                    y[((b * out + oy) * out + ox) * d + o] = acc as f32;
                }
            }
        }
    }
    y
}

#[test]
fn gathered_im2col_is_a_convolution_its_gradient_a_scatter_and_the_host_im2col_matches_it() {
    use burn::tensor::{Tensor, TensorData};
    type B = crate::backend::CpuB;
    let dev = Default::default();
    let mut rng = envdist_core::Rng::seed_from_u64(9);
    // Even and odd sides, as the encoder meets them (14 -> 6 -> 2 at 32; 7 -> 3 at 17), and
    // zero-padded maps (16 -> 8 -> 4 at 32 with 3x3 kernels and padding 1).
    for (n, side, c, k, d, pad) in [
        (3, 14, 4, 3, 5, 0),
        (2, 7, 3, 3, 2, 0),
        (2, 17, 3, 5, 4, 0),
        (2, 16, 3, 3, 4, 1),
        (2, 7, 2, 3, 3, 1),
        (1, 9, 2, 5, 2, 2),
    ] {
        let x: Vec<f32> = (0..n * side * side * c).map(|_| rng.normal()).collect();
        let w: Vec<f32> = (0..k * k * c * d).map(|_| rng.normal()).collect();
        let xt = Tensor::<B, 4>::from_data(TensorData::new(x.clone(), [n, side, side, c]), &dev);
        let wt = Tensor::<B, 2>::from_data(TensorData::new(w.clone(), [k * k * c, d]), &dev);
        let got: Vec<f32> = crate::model::im2col_stride2(xt, k, pad)
            .matmul(wt)
            .into_data()
            .to_vec()
            .unwrap();
        // The padding written out on the host, then the plain convolution.
        let ps = side + 2 * pad;
        let mut padded = vec![0.0f32; n * ps * ps * c];
        for b in 0..n {
            for y in 0..side {
                for xx in 0..side {
                    let src = ((b * side + y) * side + xx) * c;
                    let dst = ((b * ps + y + pad) * ps + xx + pad) * c;
                    padded[dst..dst + c].copy_from_slice(&x[src..src + c]);
                }
            }
        }
        let want = naive_conv(&padded, n, ps, c, k, &w, d);
        assert_eq!(got.len(), want.len());
        for (a, b) in got.iter().zip(&want) {
            assert!(
                (a - b).abs() < 1e-4 * (1.0 + b.abs()),
                "{a} vs {b} (side {side}, padding {pad})"
            );
        }
        // Its gradient: each input value gets the sum of the output gradients of every tap
        // that read it (taps in the padding read nothing).
        let out = (ps - k) / 2 + 1;
        let r: Vec<f32> = (0..n * out * out * k * k * c)
            .map(|_| rng.normal())
            .collect();
        let xt = Tensor::<B, 4>::from_data(TensorData::new(x.clone(), [n, side, side, c]), &dev)
            .require_grad();
        let rt =
            Tensor::<B, 2>::from_data(TensorData::new(r.clone(), [n * out * out, k * k * c]), &dev);
        let grads = (crate::model::im2col_stride2(xt.clone(), k, pad) * rt)
            .sum()
            .backward();
        let got: Vec<f32> = xt.grad(&grads).unwrap().into_data().to_vec().unwrap();
        let mut want = vec![0.0f64; n * side * side * c];
        for b in 0..n {
            for oy in 0..out {
                for ox in 0..out {
                    for ky in 0..k {
                        for kx in 0..k {
                            let (y, xx) = (2 * oy + ky, 2 * ox + kx);
                            if y < pad || xx < pad || y >= side + pad || xx >= side + pad {
                                continue;
                            }
                            for ch in 0..c {
                                let row = (b * out + oy) * out + ox;
                                want[((b * side + y - pad) * side + xx - pad) * c + ch] +=
                                    r[(row * k * k + ky * k + kx) * c + ch] as f64;
                            }
                        }
                    }
                }
            }
        }
        for (a, b) in got.iter().zip(&want) {
            assert!(
                (*a as f64 - b).abs() < 1e-5 * (1.0 + b.abs()),
                "gradient {a} vs {b} (side {side}, padding {pad})"
            );
        }
    }
    // The host's im2col of a frame (bytes) is the same first convolution, without padding and
    // with it.
    for (kernels, padding) in [([5, 3, 3], 0), ([3, 3, 3], 1), ([4, 3, 3], 2)] {
        let cfg = ModelConfig {
            encoder: ImageEncoder::Conv,
            conv_kernels: kernels,
            conv_padding: padding,
            ..ModelConfig::cpu()
        };
        let size = cfg.image_size;
        let mut img = envdist_core::Rgb8Image::new(size as u32, size as u32);
        for (i, v) in img.data.iter_mut().enumerate() {
            *v = (i * 37 % 251) as u8;
        }
        let obs = envdist_core::Observation {
            image: img.clone(),
            instruction: "x".into(),
            harness: Default::default(),
        };
        let f = crate::encode::encode(&obs, envdist_core::ActionMask::ALL, &cfg);
        let mut bufs = crate::encode::BatchBuffers::default();
        bufs.fill([&f].into_iter(), &cfg);
        let frame: Vec<f32> = img.data.iter().map(|b| *b as f32 * (1.0 / 255.0)).collect();
        let xt = Tensor::<B, 4>::from_data(TensorData::new(frame, [1, size, size, 3]), &dev);
        let device_cols: Vec<f32> = crate::model::im2col_stride2(xt, kernels[0], padding)
            .into_data()
            .to_vec()
            .unwrap();
        assert_eq!(bufs.patches.len(), cfg.num_patches() * cfg.patch_values());
        assert_eq!(
            bufs.patches.len(),
            device_cols.len(),
            "{kernels:?} {padding}"
        );
        let differ = bufs
            .patches
            .iter()
            .zip(&device_cols)
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(
            differ, 0,
            "values of the host im2col that differ from the device's ({kernels:?}, padding {padding})"
        );
    }
}

#[test]
fn grouped_rows_give_the_plain_product_and_its_gradient() {
    use burn::tensor::{Tensor, TensorData};
    type B = crate::backend::CpuB;
    let dev = Default::default();
    let mut rng = envdist_core::Rng::seed_from_u64(4);
    // 30 frames of 36 rows (groups of 14 frames would not divide 30: groups of 10), and
    // frames longer than GEMM_K_MAX rows (split in equal parts), and inputs wider than it.
    for (frames, per_frame, k) in [(30, 36, 20), (3, 900, 8), (4, 16, 700)] {
        let rows = frames * per_frame;
        let x: Vec<f32> = (0..rows * k).map(|_| rng.normal()).collect();
        let w: Vec<f32> = (0..k * 3).map(|_| rng.normal()).collect();
        let layer = |w: &[f32]| burn::nn::Linear::<B> {
            weight: burn::module::Param::from_tensor(
                Tensor::from_data(TensorData::new(w.to_vec(), [k, 3]), &dev).require_grad(),
            ),
            bias: None,
        };
        let xt = || Tensor::<B, 2>::from_data(TensorData::new(x.clone(), [rows, k]), &dev);
        let (grouped_layer, plain_layer) = (layer(&w), layer(&w));
        let grouped = crate::model::linear_row_groups(&grouped_layer, xt(), per_frame);
        let plain = plain_layer.forward(xt());
        let (g, p): (Vec<f32>, Vec<f32>) = (
            grouped.clone().into_data().to_vec().unwrap(),
            plain.clone().into_data().to_vec().unwrap(),
        );
        for (a, b) in g.iter().zip(&p) {
            assert!((a - b).abs() < 1e-3 * (1.0 + b.abs()), "{a} vs {b}");
        }
        let gg = grouped.powf_scalar(2.0).sum().backward();
        let gp = plain.powf_scalar(2.0).sum().backward();
        let dg: Vec<f32> = grouped_layer
            .weight
            .grad(&gg)
            .unwrap()
            .into_data()
            .to_vec()
            .unwrap();
        let dp: Vec<f32> = plain_layer
            .weight
            .grad(&gp)
            .unwrap()
            .into_data()
            .to_vec()
            .unwrap();
        for (a, b) in dg.iter().zip(&dp) {
            assert!((a - b).abs() < 1e-2 * (1.0 + b.abs()), "{a} vs {b}");
        }
    }
}

/// The conv encoder trains to the same numbers on one thread and on two: its products keep
/// the `GEMM_K_MAX` invariant, and nothing in it sums in an order the thread count decides.
#[test]
fn the_conv_encoder_learns_and_gives_the_same_numbers_at_one_and_two_threads() {
    // Without padding (kernels 5, 3, 3) and with it (3, 3, 3, padding 1).
    for (kernels, padding) in [([5, 3, 3], 0), ([3, 3, 3], 1)] {
        the_conv_encoder_at(kernels, padding);
    }
}

/// Each update's policy loss, value loss, entropy, KL and gradient norm over `updates` updates
/// of `cfg` on the two toy goal envs at H0.
fn update_stats(cfg: TrainConfig, updates: usize) -> Vec<[f32; 5]> {
    let mut s = sampler(&["toy/goal", "toy/goal-mirrored"], HarnessLevel::H0);
    let mut t = Trainer::new(cfg, Arc::new(ToyFactory), Device::Cpu).unwrap();
    (0..updates)
        .map(|_| {
            let u = t.train_update(&mut s).unwrap();
            [
                u.policy_loss,
                u.value_loss,
                u.entropy,
                u.approx_kl,
                u.grad_norm,
            ]
        })
        .collect()
}

/// The bits of [`update_stats`].
fn update_bits(cfg: TrainConfig, updates: usize) -> Vec<[u32; 5]> {
    update_stats(cfg, updates)
        .into_iter()
        .map(|u| u.map(f32::to_bits))
        .collect()
}

fn the_conv_encoder_at(kernels: [usize; 3], padding: usize) {
    let run = |threads: usize| {
        at_threads(threads, || {
            let mut cfg = tiny(10_000);
            cfg.model.encoder = ImageEncoder::Conv;
            cfg.model.image_size = 24;
            cfg.model.conv_kernels = kernels;
            cfg.model.conv_padding = padding;
            update_bits(cfg, 3)
        })
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert!(one.iter().all(|u| f32::from_bits(u[1]).is_finite()));
}

/// The `cpu` preset's network trains to the same numbers on one thread and on two. burn's CPU
/// backend runs products of at least 192^3 multiply-adds on every thread (its `rayon` feature):
/// the `cpu` network's image and fusion layers at a 256-sample minibatch are above that, so
/// this test runs the threaded products. The threads split a product's output rows and
/// columns, never its contraction, so each value is the same sum in the same order; a change
/// that let the thread count decide an order (a threaded reduction, a split contraction) fails
/// here.
#[test]
fn the_cpu_network_gives_the_same_numbers_at_one_and_two_threads() {
    // At one shard (one graph per minibatch) and at two (the preset's and the records'
    // arithmetic): two shards one after another at one thread, side by side in pools of their
    // own at two threads (one thread a pool) and at four (two a pool, so a shard's products
    // are threaded too).
    for shards in [1, 2] {
        let run = |threads: usize| {
            at_threads(threads, || {
                let mut cfg = TrainConfig::preset("cpu").unwrap();
                cfg.num_envs = 16;
                cfg.total_env_steps = 10_000;
                cfg.learn_shards = shards;
                update_bits(cfg, 2)
            })
        };
        let one = run(1);
        assert_eq!(one, run(2), "{shards} shards");
        if shards == 2 {
            assert_eq!(one, run(4), "{shards} shards at four threads");
        }
        assert!(one.iter().all(|u| f32::from_bits(u[1]).is_finite()));
    }
}

/// Minibatch shards split the work, not the update: the statistics and the gradient's norm of
/// an update with 2 or 3 shards are the one-shard update's up to rounding (each shard's loss
/// is its share of the minibatch's, its gradients summed), with and without per-minibatch
/// advantages and in the critic's warm-up; the same shard count gives the same bits again.
#[test]
fn sharded_minibatches_give_the_whole_minibatchs_update() {
    let stats = |shards: usize, per_minibatch: bool, warmup: u64| {
        let mut cfg = tiny(10_000);
        cfg.learn_shards = shards;
        cfg.minibatch_advantage_norm = per_minibatch;
        cfg.value_warmup_updates = warmup;
        update_stats(cfg, 2)
    };
    // (The clip fraction is left out: a count, one row's rounding can move it by 1/64.)
    for (per_minibatch, warmup) in [(false, 0), (true, 0), (false, 1)] {
        let whole = stats(1, per_minibatch, warmup);
        for shards in [2, 3] {
            let split = stats(shards, per_minibatch, warmup);
            for (w, s) in whole.iter().flatten().zip(split.iter().flatten()) {
                assert!(
                    (w - s).abs() <= 2e-3 * w.abs().max(1e-2),
                    "{shards} shards, per-minibatch {per_minibatch}, warm-up {warmup}: \
                     {whole:?} against {split:?}"
                );
            }
            let again = stats(shards, per_minibatch, warmup);
            let bits =
                |v: &Vec<[f32; 5]>| v.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&split), bits(&again));
        }
    }
}

/// `minibatch_advantage_norm` standardises the advantages per minibatch (SB3's way): a real
/// change of the update (its statistics differ from the rollout-wide standardisation's), and
/// as reproducible.
#[test]
fn per_minibatch_advantage_norm_changes_the_update_and_is_reproducible() {
    let run = |per_minibatch: bool| {
        let mut cfg = tiny(10_000);
        cfg.minibatch_advantage_norm = per_minibatch;
        update_bits(cfg, 2)
    };
    let per_minibatch = run(true);
    assert_eq!(per_minibatch, run(true));
    assert_ne!(per_minibatch, run(false));
    assert!(
        per_minibatch
            .iter()
            .flatten()
            .all(|b| f32::from_bits(*b).is_finite())
    );
}
