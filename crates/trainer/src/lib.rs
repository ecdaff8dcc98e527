//! envdist-trainer (placeholder until its issue lands).
