//! Reads every `.yaml`/`.yml` file under a directory, then runs one
//! candidate parser over each, events only (no tree), on one thread:
//!
//!     parser-floor CANDIDATE DIR
//!
//! CANDIDATE is `read` (reading alone, the baseline to subtract),
//! `saphyr`, `yaml-rust2`, `unsafe-libyaml` or `libyaml-safer`. Under
//! callgrind, (instructions - instructions of `read`) / bytes is the
//! candidate's cost per byte. Files a candidate refuses are counted, not
//! skipped silently.

use std::path::{Path, PathBuf};

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            yaml_files(&path, out);
        } else if meta.is_file()
            && path
                .extension()
                .is_some_and(|e| e == "yaml" || e == "yml")
        {
            out.push(path);
        }
    }
}

/// Events seen and scalar bytes read, so that no candidate's work can be
/// optimised away; `Err` when the candidate refused the file.
type Outcome = Result<(usize, usize), String>;

fn saphyr(text: &str) -> Outcome {
    use saphyr_parser::{Event, Parser};
    let (mut events, mut bytes) = (0, 0);
    let mut parser = Parser::new_from_str(text);
    while let Some(ev) = parser.next_event() {
        let (ev, _span) = ev.map_err(|e| e.to_string())?;
        events += 1;
        if let Event::Scalar(s, ..) = ev {
            bytes += s.len();
        }
    }
    Ok((events, bytes))
}

fn yaml_rust2(text: &str) -> Outcome {
    use yaml_rust2::parser::{Event, Parser};
    let (mut events, mut bytes) = (0, 0);
    let mut parser = Parser::new_from_str(text);
    loop {
        let (ev, _marker) = parser.next_token().map_err(|e| e.to_string())?;
        events += 1;
        match ev {
            Event::StreamEnd => break,
            Event::Scalar(s, ..) => bytes += s.len(),
            _ => {}
        }
    }
    Ok((events, bytes))
}

fn unsafe_libyaml(text: &str) -> Outcome {
    use std::mem::MaybeUninit;
    use unsafe_libyaml as y;
    let (mut events, mut bytes) = (0, 0);
    // SAFETY: the parser and event are initialised by libyaml before use,
    // the input outlives the parser, and every event is deleted.
    unsafe {
        let mut parser = MaybeUninit::<y::yaml_parser_t>::uninit();
        if y::yaml_parser_initialize(parser.as_mut_ptr()).fail {
            return Err("initialize".into());
        }
        let parser = parser.as_mut_ptr();
        y::yaml_parser_set_input_string(parser, text.as_ptr(), text.len() as u64);
        let result = loop {
            let mut event = MaybeUninit::<y::yaml_event_t>::uninit();
            if y::yaml_parser_parse(parser, event.as_mut_ptr()).fail {
                break Err("libyaml refused the input".to_string());
            }
            let mut event = event.assume_init();
            events += 1;
            let kind = event.type_;
            if kind == y::YAML_SCALAR_EVENT {
                bytes += event.data.scalar.length as usize;
            }
            y::yaml_event_delete(&mut event);
            if kind == y::YAML_STREAM_END_EVENT {
                break Ok((events, bytes));
            }
        };
        y::yaml_parser_delete(parser);
        result
    }
}

fn libyaml_safer(text: &str) -> Outcome {
    use libyaml_safer::{EventData, Parser};
    let (mut events, mut bytes) = (0, 0);
    let mut input = text.as_bytes();
    let mut parser = Parser::new();
    parser.set_input_string(&mut input);
    for ev in &mut parser {
        let ev = ev.map_err(|e| e.to_string())?;
        events += 1;
        if let EventData::Scalar { value, .. } = &ev.data {
            bytes += value.len();
        }
    }
    Ok((events, bytes))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [candidate, dir] = args.as_slice() else {
        eprintln!("usage: parser-floor read|saphyr|yaml-rust2|unsafe-libyaml|libyaml-safer DIR");
        std::process::exit(2);
    };
    let parse: fn(&str) -> Outcome = match candidate.as_str() {
        "read" => |_| Ok((0, 0)),
        "saphyr" => saphyr,
        "yaml-rust2" => yaml_rust2,
        "unsafe-libyaml" => unsafe_libyaml,
        "libyaml-safer" => libyaml_safer,
        other => {
            eprintln!("unknown candidate {other:?}");
            std::process::exit(2);
        }
    };
    let mut paths = Vec::new();
    yaml_files(Path::new(dir), &mut paths);
    let texts: Vec<String> = paths
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    let total: usize = texts.iter().map(String::len).sum();
    let (mut events, mut scalar_bytes, mut refused) = (0, 0, 0);
    for text in &texts {
        match parse(text) {
            Ok((e, b)) => {
                events += e;
                scalar_bytes += b;
            }
            Err(_) => refused += 1,
        }
    }
    println!(
        "{candidate}: {} files, {total} bytes, {events} events, {scalar_bytes} scalar bytes, {refused} refused",
        texts.len()
    );
}
