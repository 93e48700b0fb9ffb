//! The lint flags borrowed from ruff's command line: rule selection
//! (`--select`, `--extend-select`, `--ignore`), `--statistics`,
//! `--output-file`, `--exit-zero` and `--quiet`.

use std::path::PathBuf;

use crate::rules::select::Selection;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct SelectionArgs {
    /// Run only these rules: ids, id prefixes ending at a `-`
    /// (`authentik`) or ALL, comma-separated or repeated. Replaces the
    /// configuration's `rules.select`.
    #[arg(long, value_name = super::complete::RULE, value_delimiter = ',')]
    pub select: Option<Vec<String>>,

    /// Run these rules too (ids or prefixes), beside the selected ones.
    #[arg(long, value_name = super::complete::RULE, value_delimiter = ',')]
    pub extend_select: Vec<String>,

    /// Do not run these rules (ids or prefixes); adds to the
    /// configuration's `rules.disable`. The more specific of a selected
    /// and an ignored entry wins.
    #[arg(long, value_name = super::complete::RULE, value_delimiter = ',')]
    pub ignore: Vec<String>,

    /// Print how many findings each rule has instead of the findings.
    #[arg(long, conflicts_with = "diff")]
    pub statistics: bool,

    /// Write the report to this file instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,

    /// Exit 0 even when findings are reported (errors still exit 2).
    #[arg(long)]
    pub exit_zero: bool,

    /// Print the findings and the summary line only: no progress lines
    /// (warnings about inputs stay) and no coverage or fix counts.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,
}

impl SelectionArgs {
    /// The rules chosen on the command line.
    pub fn selection(&self) -> Selection {
        Selection {
            select: self.select.clone(),
            extend_select: self.extend_select.clone(),
            ignore: self.ignore.clone(),
        }
    }
}
