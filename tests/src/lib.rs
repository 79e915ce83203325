//! Helpers for integration tests that run real jobs.
