//! `schema config`: the JSON Schema of `.homelab-lint.yaml`, derived from
//! the type the file is read into, so it cannot drift from what the
//! linter accepts. The repository keeps a copy at `schema/homelab-lint.json`
//! (a test checks it equals this output) for editors to fetch:
//! `# yaml-language-server: $schema=<raw URL of that file>`.

use super::args::{DataFormat, OutputFormat};
use crate::rules::config::ConfigFile;

#[derive(clap::Subcommand, Debug)]
pub enum SchemaCommand {
    /// The JSON Schema of the configuration file, .homelab-lint.yaml.
    Config {
        /// Output format.
        #[arg(short = 'o', long = "output", visible_alias = "format", value_enum, default_value_t = OutputFormat::Json)]
        format: OutputFormat,
    },
}

/// The schema `command` asks for, as JSON or YAML.
pub fn run(command: &SchemaCommand) -> Result<String, String> {
    let SchemaCommand::Config { format } = command;
    let schema = schemars::schema_for!(ConfigFile);
    let data = match format {
        OutputFormat::Json => DataFormat::Json,
        OutputFormat::Yaml => DataFormat::Yaml,
    };
    super::render_data(data, &schema, |_| String::new())
}
