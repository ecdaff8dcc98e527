//! envdist-curriculum (placeholder until its issue lands).
