//! envdist-envs (placeholder until its issue lands).
