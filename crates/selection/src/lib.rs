//! envdist-selection (placeholder until its issue lands).
