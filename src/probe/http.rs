//! HTTP probe (next step).
