//! Flux's `${...}` expansion: a port of fluxcd/pkg `envsubst` (the fork of
//! drone/envsubst that kustomize-controller's `varsub` runs), step by step,
//! because its corner cases are what users hit: `$$` escapes, `${v-d}`
//! being a syntax error, `:+` acting as a default, `*` crossing `/` in
//! trims, and every argument being evaluated before the variable is read
//! (template.go `evalFunc`).
//!
//! Two things are added to what Flux does. Values the repository does not
//! hold (SOPS ciphertext, a source only the cluster has) are *unknown*:
//! any expression that reads one keeps its text as written, while the
//! known parts of the same string are still expanded. And every step is
//! budgeted ([`Budget`]), so hostile input costs bounded time and memory:
//! Go would happily build a gigabyte string here.

/// What an expansion may read: a variable's value, `Unknown` when only
/// the cluster knows it.
pub enum Lookup<'a> {
    Value(&'a str),
    Unknown,
    Undefined,
}

/// The budgets of one run's substitution, from [`crate::yaml::Limits`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Bytes one expanded string may have.
    pub max_value_bytes: usize,
    /// Bytes all expanded strings of the run may add to their sources.
    pub growth_left: usize,
    /// Pattern-matching steps left for the run (a trim is a dynamic
    /// programme over pattern x value).
    pub steps_left: u64,
    /// Whether a cap of the run stopped an expansion: with more left, the
    /// same expansions would have given something else.
    pub exceeded: bool,
}

impl Budget {
    /// This budget after a run of expansions spent from `before` what
    /// it spent (down to `after`): `None` when a cap of the run was hit
    /// (by then, or by that run) or that run spent more than this budget
    /// holds, so the same expansions from this budget might have given
    /// something else. Whatever a run that hit no cap spent, it spends
    /// from any budget that holds as much.
    pub fn replay(&self, before: &Budget, after: &Budget) -> Option<Budget> {
        if after.exceeded {
            return None;
        }
        let growth = before.growth_left.checked_sub(after.growth_left)?;
        let steps = before.steps_left.checked_sub(after.steps_left)?;
        Some(Budget {
            growth_left: self.growth_left.checked_sub(growth)?,
            steps_left: self.steps_left.checked_sub(steps)?,
            ..self.clone()
        })
    }
}

/// Marks the messages of budget hits, for callers and tests.
pub const BUDGET: &str = "substitution budget exceeded";

/// The result of expanding one string.
#[derive(Debug, PartialEq)]
pub struct Expanded {
    /// The expansion, with every unknown expression as written.
    pub text: String,
    /// Variables referenced, outermost first.
    pub uses: Vec<String>,
    /// Variables that nothing defines whose empty value reaches `text`
    /// (Flux renders them as ""): not those of a default that is not used,
    /// nor those written with an empty default (`${X:=}`).
    pub undefined: Vec<String>,
    /// Variables that nothing defines read without a default anywhere,
    /// used or not: kustomize-controller's strict mode (the default since
    /// v1.9, `StrictPostBuildSubstitutions`) fails the Kustomization on
    /// each, because `evalFunc` evaluates a default before using it.
    pub strict_unset: Vec<String>,
    /// Some expression read a value the repository does not hold.
    pub unresolved: bool,
}

/// Whether `text` parses as Flux's envsubst reads it, whatever the
/// variables hold: a parse error fails the Flux Kustomization for certain.
pub fn parses(text: &str) -> bool {
    Parser::new(text).parse().is_ok()
}

/// The first `${...}` of `text` that does not parse on its own line, for
/// a message that points into a large value (a dashboard's JSON).
pub fn first_unparsable(text: &str) -> Option<&str> {
    text.match_indices("${")
        .filter(|(i, _)| !text[..*i].ends_with('$'))
        .find_map(|(i, _)| {
            let line = &text[i..text[i..].find('\n').map_or(text.len(), |e| i + e)];
            let shown = &line[..line.find('}').map_or(line.len(), |e| e + 1)];
            let shown = shown
                .char_indices()
                .nth(60)
                .map_or(shown, |(e, _)| &shown[..e]);
            (!parses(line)).then_some(shown)
        })
}

/// Expands `text`. `Err` is a syntax error (Flux fails the Kustomization)
/// or a budget hit (message starts with [`BUDGET`]).
pub fn expand<'v>(
    text: &str,
    lookup: &dyn Fn(&str) -> Lookup<'v>,
    budget: &mut Budget,
) -> Result<Expanded, String> {
    // The full parser only for what the common forms do not cover.
    let (ast, mut parser) = match common::parse(text) {
        Some(ast) => (ast, None),
        None => {
            let mut parser = Parser::new(text);
            (parser.parse()?, Some(parser))
        }
    };
    let mut ev = Eval {
        lookup,
        budget,
        uses: Vec::new(),
        strict_unset: Vec::new(),
        unresolved: false,
    };
    // Most expansions come out about as long as what was written: one
    // block, not one per doubling.
    let mut out: Vec<u8> = Vec::with_capacity(text.len());
    let mut undefined = Vec::new();
    let mut ascii = None;
    for node in &ast {
        match node {
            // Text between expressions goes straight to the output, not
            // through a copy of its own.
            Ast::Text(t) => out.extend_from_slice(t.as_bytes()),
            Ast::Func { at: (from, to), .. } => match ev.eval(node)? {
                Val::Known {
                    bytes,
                    undefined: u,
                } => {
                    out.extend_from_slice(&bytes);
                    undefined.extend(u);
                }
                Val::Unknown => {
                    ev.unresolved = true;
                    // Positions are in chars, as in the full parser's
                    // buffer; in ASCII text they are the bytes', and the
                    // buffer (a char per byte of a long text) is not made.
                    match &parser {
                        None if *ascii.get_or_insert_with(|| text.is_ascii()) => {
                            out.extend_from_slice(&text.as_bytes()[*from..*to]);
                        }
                        _ => {
                            let buf = &parser.get_or_insert_with(|| Parser::new(text)).buf;
                            out.extend(buf[*from..*to].iter().collect::<String>().bytes());
                        }
                    }
                }
            },
        }
        ev.check_len(out.len())?;
    }
    let grown = out.len().saturating_sub(text.len());
    if grown > ev.budget.growth_left {
        ev.budget.exceeded = true;
        return Err(format!(
            "{BUDGET}: substitution output of the run passed its cap"
        ));
    }
    ev.budget.growth_left -= grown;
    let text = String::from_utf8(out).map_err(|_| {
        "the expansion cuts a multi-byte character in two; Flux then fails to parse \
         the object (YAMLToJSON: invalid UTF-8)"
            .to_string()
    })?;
    dedup(&mut undefined);
    dedup(&mut ev.strict_unset);
    Ok(Expanded {
        text,
        uses: ev.uses,
        undefined,
        strict_unset: ev.strict_unset,
        unresolved: ev.unresolved,
    })
}

fn dedup(v: &mut Vec<String>) {
    let mut seen = crate::source::PathSet::default();
    v.retain(|x| seen.insert(x.clone()));
}

use std::borrow::Cow;

mod common;
mod glob;
mod gostr;
mod parse;

use glob::Glob;
use gostr::*;
use parse::{Ast, Parser};

// ---- Evaluation: fluxcd/pkg envsubst template.go and funcs.go ----

/// A value while evaluating: bytes, since Go slices strings by byte and
/// `${V:0:1}` may cut a character in two. A variable's value or a text
/// as written is borrowed, not copied: most expressions are `${NAME}`.
enum Val<'a> {
    Known {
        bytes: Cow<'a, [u8]>,
        /// Undefined variables whose "" reached these bytes.
        undefined: Vec<String>,
    },
    Unknown,
}

struct Eval<'l, 'v, 'b> {
    lookup: &'l dyn Fn(&str) -> Lookup<'v>,
    budget: &'b mut Budget,
    uses: Vec<String>,
    strict_unset: Vec<String>,
    unresolved: bool,
}

/// template.go `isDefaultOp`: the operators that supply a fallback.
fn is_default_op(name: &str) -> bool {
    matches!(name, "-" | "+" | "=" | "?" | ":-" | ":+" | ":=" | ":?")
}

impl<'v> Eval<'_, 'v, '_> {
    fn check_len(&self, len: usize) -> Result<(), String> {
        if len > self.budget.max_value_bytes {
            return Err(format!(
                "{BUDGET}: an expanded value passed {} bytes",
                self.budget.max_value_bytes
            ));
        }
        Ok(())
    }

    fn eval<'a>(&mut self, node: &'a Ast) -> Result<Val<'a>, String>
    where
        'v: 'a,
    {
        let (name, param, args) = match node {
            Ast::Text(t) => {
                return Ok(Val::Known {
                    bytes: Cow::Borrowed(t.as_bytes()),
                    undefined: Vec::new(),
                });
            }
            Ast::Func {
                name, param, args, ..
            } => (name, param, args),
        };
        self.uses.push(param.clone());
        // Go evaluates every argument before it reads the variable.
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            values.push(self.eval(a)?);
        }
        let (s, mut undefined): (&'v [u8], Vec<String>) = match (self.lookup)(param) {
            Lookup::Unknown => return Ok(Val::Unknown),
            Lookup::Value(v) => (v.as_bytes(), Vec::new()),
            Lookup::Undefined => {
                if !is_default_op(name) {
                    self.strict_unset.push(param.clone());
                }
                (b"", vec![param.clone()])
            }
        };
        let default_op = !matches!(
            name.as_str(),
            "," | ",," | "^" | "^^" | "#" | "##" | "%" | "%%" | ":" | "/#" | "/%" | "/" | "//"
        );
        if default_op {
            // funcs.go `toDefault`: the value, or the arguments joined when
            // it is empty. Only the arguments used can make it unknown or
            // carry their undefined variables.
            if !s.is_empty() || values.is_empty() {
                // `${X:=}`, `${X:-}`: the empty default is written, so the
                // empty value is the author's, not a missing variable's
                // (and strict mode lets default operators be unset). `${X}`
                // has no operator; `${X:?}` asks for a value.
                if s.is_empty() && is_default_op(name) && !name.ends_with('?') {
                    undefined.clear();
                }
                return Ok(Val::Known {
                    bytes: Cow::Borrowed(s),
                    undefined: if s.is_empty() { undefined } else { Vec::new() },
                });
            }
            let mut bytes = Vec::new();
            let mut undefined = Vec::new();
            for v in values {
                match v {
                    Val::Unknown => return Ok(Val::Unknown),
                    Val::Known {
                        bytes: b,
                        undefined: u,
                    } => {
                        self.check_len(bytes.len() + b.len())?;
                        bytes.extend_from_slice(&b);
                        undefined.extend(u);
                    }
                }
            }
            return Ok(Val::Known {
                bytes: Cow::Owned(bytes),
                undefined,
            });
        }
        let mut args: Vec<Vec<u8>> = Vec::with_capacity(values.len());
        for v in values {
            match v {
                Val::Unknown => return Ok(Val::Unknown),
                Val::Known {
                    bytes,
                    undefined: u,
                } => {
                    undefined.extend(u);
                    args.push(bytes.into_owned());
                }
            }
        }
        let bytes = self.apply(name, s, &args)?;
        self.check_len(bytes.len())?;
        Ok(Val::Known {
            bytes: Cow::Owned(bytes),
            undefined,
        })
    }

    /// template.go `lookupFunc` and the functions of funcs.go.
    fn apply(&mut self, name: &str, s: &[u8], args: &[Vec<u8>]) -> Result<Vec<u8>, String> {
        let arg = |i: usize| args.get(i).map(Vec::as_slice);
        Ok(match name {
            "," => map_first(s, to_lower),
            ",," => map_all(s, to_lower),
            "^" => map_first(s, to_upper),
            "^^" => map_all(s, to_upper),
            "#" if args.is_empty() => s.len().to_string().into_bytes(),
            "#" => self.trim(s, arg(0), false, false)?,
            "##" => self.trim(s, arg(0), true, false)?,
            "%" => self.trim(s, arg(0), false, true)?,
            "%%" => self.trim(s, arg(0), true, true)?,
            ":" => substr(s, args)?,
            "/#" => match (args.len(), arg(0), arg(1)) {
                (2, Some(p), Some(r)) if s.starts_with(p) => [r, &s[p.len()..]].concat(),
                _ => s.to_vec(),
            },
            "/%" => match (args.len(), arg(0), arg(1)) {
                (2, Some(p), Some(r)) if s.ends_with(p) => [&s[..s.len() - p.len()], r].concat(),
                _ => s.to_vec(),
            },
            "/" | "//" => match arg(0) {
                Some(p) => {
                    let limit = (name == "/").then_some(1);
                    go_replace(
                        s,
                        p,
                        arg(1).unwrap_or(b""),
                        limit,
                        self.budget.max_value_bytes,
                    )?
                }
                None => s.to_vec(),
            },
            _ => unreachable!("default operators are handled by the caller"),
        })
    }

    /// funcs.go `trimShortest`/`trimLongest` and their suffix forms, which
    /// reverse value and pattern by runes and trim the prefix.
    fn trim(
        &mut self,
        s: &[u8],
        pattern: Option<&[u8]>,
        longest: bool,
        suffix: bool,
    ) -> Result<Vec<u8>, String> {
        let Some(pattern) = pattern else {
            return Ok(s.to_vec());
        };
        let (s, pattern) = if suffix {
            (reverse_runes(s), reverse_runes(pattern))
        } else {
            (s.to_vec(), pattern.to_vec())
        };
        let Some(glob) = Glob::parse(&pattern) else {
            // A malformed pattern never matches (see `Glob::parse`).
            return Ok(if suffix { reverse_runes(&s) } else { s });
        };
        let cost = (glob.len() as u64 + 1).saturating_mul(s.len() as u64 + 1);
        if cost > self.budget.steps_left {
            self.budget.exceeded = true;
            return Err(format!(
                "{BUDGET}: pattern matching of the run passed its cap"
            ));
        }
        self.budget.steps_left -= cost;
        let ends = glob.matching_prefixes(&s);
        // Never the empty prefix: Go tries lengths len(s) down to 1.
        let end = if longest {
            (1..=s.len()).rev().find(|&e| ends[e])
        } else {
            (1..=s.len()).find(|&e| ends[e])
        };
        let out = match end {
            Some(e) => s[e..].to_vec(),
            None => s,
        };
        Ok(if suffix { reverse_runes(&out) } else { out })
    }
}

#[cfg(test)]
mod tests;
