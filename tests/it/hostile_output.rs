//! Text from a hostile repository reaches people and CI logs inert: file
//! and directory names, object names and values holding terminal
//! controls, C1 controls, bidirectional overrides, line breaks and GitHub
//! workflow commands come out of every output format and stderr with no
//! raw control character and no line the Actions runner would read as a
//! command, except the annotations `-o github` means to write.

use crate::support;

use std::path::Path;

use support::limited::run_linter;

/// A piece of each class: C0 (ESC, BEL, a lone CR, vertical tab), DEL,
/// C1 (CSI, NEL), bidi (override, isolate, mark), the line separator, a
/// newline that starts a command, and the runner's older `##[` form.
const HOSTILE: &str = "\u{1b}[2J\u{7}\r\u{b}\u{7f}\u{9b}31m\u{85}\u{202e}\u{2067}\u{200f}\u{2028}\n::add-mask::leak\n  ::stop-commands::tok ##[add-mask]x";

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `s` as a YAML double-quoted scalar.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() || (c as u32) > 0x7e => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Flux Kustomizations whose names and paths hold [`HOSTILE`], in files
/// and directories whose names hold it too, each giving a finding
/// (`flux-kustomization-path-missing`); more than `-o github` annotates,
/// so the overflow is listed as plain lines. A file that does not parse
/// gives an input problem under a hostile name.
fn hostile_repo() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let name_part =
        "\u{1b}[2J\u{9b}\u{202e}\r\n::add-mask::leak\n::error file=x,line=1::forged ##[add-mask]y";
    let dirs = [
        format!("apps/{name_part}"),
        "::warning file=.github%2Fworkflows%2Fci.yml,line=1::X".to_string(),
        "\u{a0}::notice::lead".to_string(),
    ];
    for (d, dir) in dirs.iter().enumerate() {
        for i in 0..5 {
            let name = format!("ks{d}{i}-{HOSTILE}");
            write(
                root,
                &format!("{dir}/{i}-{name_part}.yaml"),
                &format!(
                    "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {}\n  namespace: flux-system\nspec:\n  path: {}\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n",
                    quoted(&name),
                    quoted(&format!("./missing/{HOSTILE}")),
                ),
            );
        }
        write(root, &format!("{dir}/bad-{name_part}.yaml"), "a: [\n");
    }
    tmp
}

/// Characters no output may hold raw.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t' && c != '\r')
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}'
        )
}

/// The runner's lines: it splits at CR, LF and CRLF.
fn log_lines(text: &str) -> Vec<&str> {
    text.split(['\n', '\r']).collect()
}

/// Panics unless `text` is inert. With `annotations`, lines starting
/// with `::` must be the annotations `-o github` writes: one of its
/// three commands, properties without a raw `:` or `,` inside a value.
fn assert_inert(what: &str, text: &str, annotations: bool) {
    if let Some(c) = text.chars().find(|c| hidden(*c)) {
        panic!("{what}: raw {c:?} in:\n{text}");
    }
    for (i, c) in text.char_indices() {
        // A CR only ends a CRLF line.
        assert!(
            c != '\r' || text[i + 1..].starts_with('\n'),
            "{what}: lone CR in:\n{text}"
        );
    }
    for line in log_lines(text) {
        assert!(!line.contains("##["), "{what}: `##[` command in {line:?}");
        let trimmed = line.trim_start();
        if !trimmed.starts_with("::") {
            continue;
        }
        assert!(
            annotations && line == trimmed,
            "{what}: a line the runner reads as a command: {line:?}"
        );
        let rest = &trimmed[2..];
        let end = rest
            .find("::")
            .unwrap_or_else(|| panic!("{what}: {line:?}"));
        let (command, props) = rest[..end].split_once(' ').unwrap_or((&rest[..end], ""));
        assert!(
            ["error", "warning", "notice"].contains(&command),
            "{what}: command {command:?} in {line:?}"
        );
        for prop in props.split(',').filter(|p| !p.is_empty()) {
            let (key, value) = prop
                .split_once('=')
                .unwrap_or_else(|| panic!("{what}: {line:?}"));
            assert!(
                ["file", "line", "col", "endLine", "endColumn", "title"].contains(&key),
                "{what}: property {key:?} in {line:?}"
            );
            assert!(!value.contains(':'), "{what}: {line:?}");
        }
    }
}

#[test]
fn every_output_format_is_inert_to_terminal_controls_and_workflow_commands() {
    let tmp = hostile_repo();
    let root = tmp.path().to_str().unwrap();
    let mut seen_overflow = false;
    for format in [
        "human", "concise", "json", "yaml", "sarif", "github", "markdown",
    ] {
        let run = run_linter(&["-o", format, "--color", "never", "-v", root]);
        assert_eq!(run.code(), Some(1), "{format}: {}", run.stderr);
        let out = String::from_utf8(run.stdout.clone()).expect("output is UTF-8");
        assert!(
            out.contains("flux-kustomization-path-missing"),
            "{format}:\n{out}"
        );
        assert_inert(&format!("{format} stdout"), &out, format == "github");
        assert_inert(&format!("{format} stderr"), &run.stderr, false);
        seen_overflow |= format == "github" && out.contains("more not annotated");
        // Markdown: the only HTML is the diagrams' own bold and breaks;
        // a `<` from the repository is backslash-escaped.
        if format == "markdown" {
            for (i, _) in out.match_indices('<') {
                let at = &out[i..];
                assert!(
                    out[..i].ends_with('\\')
                        || ["<b>", "</b>", "<br/>"].iter().any(|t| at.starts_with(t)),
                    "markdown: raw HTML at {:?}",
                    &at[..at.len().min(40)]
                );
            }
        }
        // The machine formats keep every value as it was written.
        match format {
            "json" => assert!(run.json().to_string().contains("::add-mask::leak")),
            "yaml" => {
                let back: serde_json::Value = serde_saphyr::from_str(&out).unwrap();
                assert!(back.to_string().contains("\\u001b[2J"), "{out}");
            }
            _ => {}
        }
    }
    assert!(seen_overflow, "-o github listed no finding as a plain line");
    let inventory = run_linter(&["inventory", "-o", "yaml", root]);
    assert_inert("inventory yaml", &inventory.stdout_text(), false);
    let inventory = run_linter(&["inventory", root]);
    assert_inert("inventory json", &inventory.stdout_text(), false);
}

/// A manifest on one line of a megabyte (minified, or a large value
/// written flow-style): its finding's snippet shows a window around the
/// span, not the line (100 findings on such a line printed 100 MB; 1,000
/// aborted), and the header still says the true column.
#[test]
fn a_snippet_on_a_long_line_is_a_window_around_its_span() {
    let tmp = tempfile::tempdir().unwrap();
    let pad = "x".repeat(512 * 1024);
    let line = format!(
        "{{apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, metadata: {{name: wide, namespace: flux-system, annotations: {{before: \"{pad}\"}}}}, spec: {{path: ./missing, sourceRef: {{kind: GitRepository, name: flux-system}}, after: \"{pad}\"}}}}\n"
    );
    write(tmp.path(), "flux/wide.yaml", &line);
    let column = line.find("./missing").unwrap() + 1;
    let run = run_linter(&["--color", "never", tmp.path().to_str().unwrap()]);
    let out = run.stdout_text();
    assert!(
        out.contains("flux-kustomization-path-missing"),
        "{}",
        run.stderr
    );
    assert!(out.len() < 16 * 1024, "{} bytes of output", out.len());
    assert!(
        out.contains(&format!("[flux/wide.yaml:1:{column}]")),
        "{out}"
    );
    assert!(out.contains("./missing"), "{out}");
}

/// A 100 KB variable name used once in a file that 20 Flux Kustomizations
/// render: each rendering is a finding, whose message and label printed
/// the name whole (200 renderings printed 28 MB from 100 KB of input).
/// Messages and labels show the first 256 bytes of such a text and `…`.
#[test]
fn a_long_name_in_a_finding_is_shown_clipped() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let name = "A".repeat(100_000);
    write(
        root,
        "apps/cm.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: s}}\ndata:\n  a: '${{{name}}}'\n"
        ),
    );
    for i in 0..20 {
        write(
            root,
            &format!("flux/k{i}.yaml"),
            &format!(
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: k{i}, namespace: flux-system}}\nspec:\n  path: ./apps\n  targetNamespace: n{i}\n  postBuild:\n    substitute: {{B: b}}\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n"
            ),
        );
    }
    let run = run_linter(&["--color", "never", root.to_str().unwrap()]);
    let out = run.stdout_text();
    assert_eq!(
        out.matches("flux-variable-undefined").count(),
        20,
        "{}",
        run.stderr
    );
    // The message wraps before the name; the clipped name ends in `…`.
    let clipped = format!("{}…", "A".repeat(256));
    assert!(out.contains(&clipped), "{}", &out[..out.len().min(2000)]);
    let longest = out.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 2000, "a line of {longest} bytes");
    assert!(out.len() < 200_000, "{} bytes of output", out.len());
}

/// A 1 MB variable name in a value: the finding's message and labels
/// were clipped, but its evidence and chain (what `-o json`, `-o yaml`,
/// `-o sarif`, the Markdown diagrams and the graph carry) held the value
/// whole. Every format shows at most the clipped word.
#[test]
fn a_megabyte_value_in_a_finding_is_clipped_in_every_output_format() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let name = "A".repeat(1 << 20);
    write(
        root,
        "apps/cm.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: s}}\ndata:\n  a: '${{{name}}}'\n"
        ),
    );
    write(
        root,
        "flux/k.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: k, namespace: flux-system}\nspec:\n  path: ./apps\n  postBuild:\n    substitute: {B: b}\n  sourceRef: {kind: GitRepository, name: flux-system}\n",
    );
    let root = root.to_str().unwrap();
    let longest_run = |out: &str| out.split(|c| c != 'A').map(str::len).max().unwrap_or(0);
    for format in [
        "human", "concise", "json", "yaml", "sarif", "github", "markdown",
    ] {
        let run = run_linter(&["-o", format, "--color", "never", root]);
        let out = run.stdout_text();
        assert!(
            out.contains("flux-variable-undefined"),
            "{format}: {}",
            run.stderr
        );
        // Human output's snippet shows the source line in a window of
        // 160 bytes each side of the span.
        let shown = if format == "human" { 320 } else { 256 };
        let run_of_a = longest_run(&out);
        assert!(
            run_of_a <= shown,
            "{format}: {run_of_a} bytes of the value in {} bytes of output",
            out.len()
        );
        // SARIF carries every rule's metadata (about 140 KB); the value
        // whole would be a megabyte.
        assert!(out.len() < 512 * 1024, "{format}: {} bytes", out.len());
    }
    for language in ["mermaid", "dot"] {
        let run = run_linter(&["inventory", "--graph", language, root]);
        let out = run.stdout_text();
        // The finding's chain: the variable, clipped.
        let run_of_a = longest_run(&out);
        assert!(run_of_a > 0, "{language}: {out}");
        assert!(run_of_a <= 256, "{language}: {} bytes", out.len());
    }
}

/// Lines of `text` that start, once leading blanks and the human
/// format's box drawing are set aside, with `forged`.
fn forged_lines<'t>(text: &'t str, forged: &str) -> Vec<&'t str> {
    text.lines()
        .filter(|l| {
            l.trim_start_matches(|c: char| c.is_whitespace() || "│╭╰·×".contains(c))
                .starts_with(forged)
        })
        .collect()
}

/// A fixed file in a directory named `x\n+++ b`: `--diff` wrote the
/// name raw into its `---`/`+++` header, whose second line then named
/// `forged.yaml` as the file patched (a patch tool reading the diff
/// would take that file), and `--fix` logged `fixed x` and `wrote x`
/// with the rest on a line of its own. Paths stay on their line.
#[test]
fn a_line_break_in_a_fixed_file_name_starts_no_line_of_a_diff_or_the_fix_log() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/fixes/cnpg-flow-parameters");
    for name in ["helmrelease.yaml", "rook-ceph-cluster.yaml"] {
        std::fs::copy(fixture.join(name), tmp.path().join(name)).unwrap();
    }
    write(
        tmp.path(),
        "x\n+++ b/forged.yaml",
        &std::fs::read_to_string(fixture.join("database.yaml")).unwrap(),
    );
    let root = tmp.path().to_str().unwrap();
    let diff = run_linter(&["--diff", "--unsafe-fixes", root]);
    let out = diff.stdout_text();
    assert!(out.contains("+++ b/x\\x0a+++ b/forged.yaml"), "{out}");
    assert_eq!(
        forged_lines(&out, "+++ b/forged"),
        Vec::<&str>::new(),
        "{out}"
    );
    let fix = run_linter(&["--fix", "--unsafe-fixes", root]);
    assert!(
        fix.stderr.contains("wrote x\\x0a+++ b/forged.yaml"),
        "{}",
        fix.stderr
    );
    assert_eq!(
        forged_lines(&fix.stderr, "+++ b/forged"),
        Vec::<&str>::new(),
        "{}",
        fix.stderr
    );
}

/// An object named `"pg\nforged.yaml:1:1: error[forged-rule]: fake"`:
/// its name, filled into a finding's message and into `-v`'s undecided
/// line, started a line that reads as a compiler's diagnostic (which a
/// CI log's problem matcher turns into an annotation). Names stay on
/// their line in every format and on stderr.
#[test]
fn a_line_break_in_an_object_name_starts_no_line_of_a_message_or_the_log() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "apps/pg.yaml",
        "apiVersion: postgresql.cnpg.io/v1\nkind: Cluster\nmetadata:\n  name: \"pg\\nforged.yaml:1:1: error[forged-rule]: fake\"\n  namespace: database\nspec:\n  instances: 1\n  imageName: ghcr.io/cloudnative-pg/postgresql:16.4\n  storage:\n    size: 10Gi\n  postgresql:\n    parameters:\n      log_checkpoints: true\n",
    );
    let root = tmp.path().to_str().unwrap();
    for format in ["human", "concise", "github", "markdown"] {
        let run = run_linter(&["-o", format, "--color", "never", "-v", root]);
        let out = run.stdout_text();
        assert!(
            out.contains("postgres-parameter-not-a-string"),
            "{format}:\n{out}"
        );
        assert_eq!(
            forged_lines(&out, "forged.yaml"),
            Vec::<&str>::new(),
            "{format}:\n{out}"
        );
        assert_eq!(
            forged_lines(&run.stderr, "forged.yaml"),
            Vec::<&str>::new(),
            "{format}:\n{}",
            run.stderr
        );
    }
}

/// One LSP message, framed as the protocol frames it.
/// `-vv` logs each Kubernetes API call with the status the server
/// answered; a server's `reason` holding terminal controls, a bidi
/// override and a line break that starts a workflow command was printed
/// raw, past the escaping every other log line has.
#[test]
fn an_api_servers_reason_in_the_call_log_is_inert() {
    use crate::fake_api::{FakeApi, Faults, Fixture};
    let fixture =
        Fixture::from_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cluster"));
    let api = FakeApi::start(
        fixture,
        Faults {
            errors: vec![("configmaps".into(), 500)],
            error_reason: Some(
                "Bad\u{1b}]0;title\u{7}\u{1b}[2J\u{9b}31m\u{202e}\n::add-mask::leak".into(),
            ),
            ..Faults::default()
        },
    );
    let tmp = tempfile::tempdir().unwrap();
    let kc = api.kubeconfig(tmp.path());
    let mut cmd = support::limited::linter();
    cmd.current_dir(tmp.path())
        .args(["--kubeconfig", kc.to_str().unwrap(), "-vv", "--no-probe"]);
    let run = support::limited::run_limited(cmd, support::limited::Limits::default());
    assert!(
        run.stderr
            .contains("api: GET /api/v1/configmaps?limit=500 -> 500 Bad"),
        "{}",
        run.stderr
    );
    assert_inert("-vv log", &run.stderr, false);
}

fn lsp_send(to: &mut impl std::io::Write, message: serde_json::Value) {
    let body = message.to_string();
    write!(to, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    to.flush().unwrap();
}

/// The next LSP message, `None` once the server closed its output.
fn lsp_read(from: &mut impl std::io::BufRead) -> Option<serde_json::Value> {
    let mut length = 0;
    loop {
        let mut header = String::new();
        if from.read_line(&mut header).unwrap() == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some(n) = header.strip_prefix("Content-Length: ") {
            length = n.parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    from.read_exact(&mut body).unwrap();
    Some(serde_json::from_slice(&body).unwrap())
}

/// Every byte but the unreserved ones percent-encoded, as VS Code
/// writes a file URI.
fn file_uri(p: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    const ENCODED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'/')
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    let path = percent_encoding::percent_encode(p.as_os_str().as_bytes(), ENCODED);
    format!("file://{path}")
}

/// What a language server session gave back.
struct LspSession {
    /// The server's log (stderr).
    log: String,
    /// The parameters of every `textDocument/publishDiagnostics`.
    published: Vec<serde_json::Value>,
}

/// A language server session: initialize at `root`, open `file` (its
/// URI as given) and hover over its start, which first runs the lint
/// that is due; then shut down.
fn lsp_session(root: &str, file: &str, text: &str) -> LspSession {
    use std::io::BufRead as _;
    let mut server = support::limited::linter()
        .arg("server")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = server.stdin.take().unwrap();
    let mut output = std::io::BufReader::new(server.stdout.take().unwrap());
    let mut stderr = server.stderr.take().unwrap();
    let log = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut text).unwrap();
        text
    });
    lsp_send(
        &mut input,
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"processId": null, "rootUri": root, "capabilities": {}}}),
    );
    assert!(lsp_read(&mut output).is_some_and(|m| m["id"] == 1));
    lsp_send(
        &mut input,
        serde_json::json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    );
    lsp_send(
        &mut input,
        serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": file, "languageId": "yaml", "version": 1,
                "text": text}}}),
    );
    lsp_send(
        &mut input,
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover",
            "params": {"textDocument": {"uri": file}, "position": {"line": 0, "character": 0}}}),
    );
    let mut published = Vec::new();
    while let Some(m) = lsp_read(&mut output).filter(|m| m["id"] != 3) {
        if m["method"] == "textDocument/publishDiagnostics" {
            published.push(m["params"].clone());
        }
    }
    lsp_send(
        &mut input,
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
    );
    while lsp_read(&mut output).is_some_and(|m| m["id"] != 2) {}
    lsp_send(
        &mut input,
        serde_json::json!({"jsonrpc": "2.0", "method": "exit"}),
    );
    drop(input);
    while output.fill_buf().is_ok_and(|b| !b.is_empty()) {
        let n = output.buffer().len();
        output.consume(n);
    }
    assert!(server.wait().unwrap().success());
    LspSession {
        log: log.join().unwrap(),
        published,
    }
}

const CONFIG_MAP: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\n";

/// The language server's log (its stderr, which editors keep and show)
/// names the repository it linted: a folder name holding terminal
/// controls and a workflow command reached it raw.
#[test]
fn the_language_server_log_is_inert() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp
        .path()
        .join("repo\u{1b}]0;title\u{7}\u{1b}[2J\u{9b}\u{202e}\n::add-mask::leak");
    write(&root, "apps/a.yaml", CONFIG_MAP);
    let file = file_uri(&root.join("apps/a.yaml"));
    let log = lsp_session(&file_uri(&root), &file, CONFIG_MAP).log;
    assert!(log.contains("linted"), "{log}");
    assert_inert("server log", &log, false);
}

/// A client that builds file URIs with the `url` crate leaves `[` and
/// `]` raw, which RFC 3986 (and so lsp-types) refuses in a path: the
/// document of a folder named `[draft]` was not read, so never linted.
/// It is linted, and its diagnostics name it by the URI the client sent.
#[test]
fn a_document_in_a_folder_named_with_brackets_is_linted() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("[draft]");
    write(&root, "apps/a.yaml", CONFIG_MAP);
    let file = format!("file://{}", root.join("apps/a.yaml").display());
    let session = lsp_session(&file_uri(&root), &file, CONFIG_MAP);
    assert!(!session.log.contains("not read"), "{}", session.log);
    assert!(session.log.contains("linted"), "{}", session.log);
    let uris: Vec<&str> = session
        .published
        .iter()
        .filter_map(|p| p["uri"].as_str())
        .collect();
    assert_eq!(uris, [file.as_str()], "{}", session.log);
    assert_inert("server log", &session.log, false);
}

/// Suppression comments naming no rule, each with an 8 KB id: each id
/// was compared with every rule id for a suggestion (a cost of its
/// length times theirs: 1,000 of them, 8 MB, took 6 s of a release
/// build) and printed whole (9.4 MB of report). No suggestion is sought
/// for an id that long, and it is shown clipped.
#[test]
fn long_unknown_ids_in_suppressions_are_neither_compared_nor_printed_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let comments: String = (0..1_000)
        .map(|i| format!("# homelab-lint: ignore x{i}-{} -- why\n", "a".repeat(8_000)))
        .collect();
    write(
        tmp.path(),
        "apps/cm.yaml",
        &format!(
            "{comments}apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: a, namespace: default}}\n"
        ),
    );
    let run = run_linter(&["--no-probe", "-o", "concise", tmp.path().to_str().unwrap()]);
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    let out = run.stdout_text();
    assert_eq!(
        out.matches("unknown-rule-in-suppression").count(),
        1_000,
        "{}",
        &out[..out.len().min(2_000)]
    );
    assert!(
        out.contains(&format!("x7-{}…", "a".repeat(253))),
        "{}",
        &out[..2_000]
    );
    assert!(out.len() < 1_000_000, "{} bytes of report", out.len());
}
