//! The integration tests, in one binary: the crate and its dependencies
//! are linked once, not once per test file, which was most of a cold
//! `cargo test`. Run one module with `cargo test --test it MODULE::`.
//!
//! The harness lives beside this directory, shared with the demo's
//! stand-in (`tests/support`): `common` (skips, the corpus, git),
//! `fake_api` (the fake Kubernetes API) and `support` (servers and the
//! resource-limited linter run).

#[path = "../common/mod.rs"]
mod common;
#[path = "../fake_api/mod.rs"]
mod fake_api;
#[path = "../support/mod.rs"]
mod support;

mod base_ref;
mod base_reuse;
mod base_tree;
mod cli_flags;
mod cli_grammar;
mod container_image;
mod conventions;
mod corpus_bumped;
mod corpus_cores;
mod corpus_coverage;
mod corpus_findings;
mod corpus_load;
mod corpus_releases;
mod corpus_sets;
mod corpus_undecided;
mod demo_script;
mod deploy_fetch;
mod deploy_manifests;
mod editor_reuse;
mod example_variants;
mod fake_port_forward;
mod fingerprints;
mod fixes;
mod flux_bootstrap;
mod flux_render;
mod github_action;
mod hostile;
mod hostile_amplify;
mod hostile_base;
mod hostile_build;
mod hostile_links;
mod hostile_output;
mod hostile_probe;
mod hostile_scale;
mod hostile_secret;
mod hostile_subst;
mod hostile_write;
mod hostile_yaml;
mod human_width;
mod krew_manifest;
mod kubectl_plugin;
mod kustomize_oracle;
mod live;
mod live_cluster;
mod live_probe;
mod lsp;
mod markdown_output;
mod metrics;
mod moved_tree;
mod other_cluster;
mod output_identity;
mod pre_commit;
mod primary_location;
mod probe_http;
mod probe_postgres;
mod pushgateway;
mod remote;
mod remote_credentials;
mod remote_files;
mod remote_transformers;
mod repo_model;
mod repo_paths;
mod review_output;
mod roots;
mod rule_docs;
mod rule_fixtures;
mod rule_redirects;
mod run_anywhere;
mod sarif_schema;
mod suppressions;
mod unused_reasons;
mod user_rules;
mod workflows;
mod yaml_fast_path;
