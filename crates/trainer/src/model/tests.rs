//! Tests of the network.

use super::init::orthogonal;
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
