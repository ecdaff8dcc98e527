//! Criterion benchmarks for envdist-selection (filled in by the selection issue).
use criterion::{Criterion, criterion_group, criterion_main};

fn placeholder(_c: &mut Criterion) {}

criterion_group!(benches, placeholder);
criterion_main!(benches);
