//! envdist-profiling (placeholder until its issue lands).
