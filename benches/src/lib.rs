//! Criterion benchmarks for envdist live in ; this library is empty.
