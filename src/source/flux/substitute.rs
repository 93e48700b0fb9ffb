//! Flux postBuild variable substitution.
//!
//! Flux (fluxcd/pkg `kustomize/kustomize_varsub.go`) serialises each
//! object to YAML, runs its fork of drone/envsubst (fluxcd/pkg `envsubst`)
//! over the text and parses the result again. We apply the same expansion
//! to every string scalar and mapping key instead, so that each value keeps
//! the place where it was written and learns where its variable was
//! defined. The scanner and parser below follow the fork's
//! `parse/scan.go` and `parse/parse.go` step by step, because its corner
//! cases (`$$` escapes, `${v-d}` being an error, `:+` acting as a default)
//! are what users actually hit.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::source::flux::data::{self, DataValue};
use crate::source::{Issue, Object, StepKind};
use crate::yaml::{Node, Origin, SourceMap, Span, Style, Value, resolve_plain};

const DISABLE_KEY: &str = "kustomize.toolkit.fluxcd.io/substitute";

/// A postBuild variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    /// With newlines removed, as Flux stores it.
    pub value: String,
    /// The value node in the ConfigMap/Secret or the inline `substitute`.
    pub defined_at: Option<Span>,
    /// Encrypted: the cluster sees a value we cannot read. `value` is empty.
    pub unknown: bool,
}

/// The variables of one Flux Kustomization.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Vars {
    pub map: BTreeMap<String, Var>,
    /// A non-optional `substituteFrom` source is not in the repo: any
    /// variable might be defined there, so an undefined one is unknown
    /// rather than empty.
    pub incomplete: bool,
    /// `spec.postBuild` of the Kustomization, for the objects' chains.
    pub at: Option<Span>,
}

impl Vars {
    pub fn get(&self, name: &str) -> Option<&Var> {
        self.map.get(name)
    }

    /// Flux skips substitution entirely when it found no variable, so
    /// `${X:=default}` then reaches the cluster as written.
    pub fn is_active(&self) -> bool {
        !self.map.is_empty() || self.incomplete
    }
}

/// Reads `spec.postBuild` of a Flux Kustomization: `substituteFrom` in
/// order (later sources win), then inline `substitute`. `lookup` finds an
/// object by kind, namespace and name; the namespace is the
/// Kustomization's (`""` when it has none).
pub fn collect_vars<'a>(
    sources: &SourceMap,
    ks: &Object,
    lookup: &dyn Fn(&str, &str, &str) -> Option<&'a Object>,
) -> (Vars, Vec<Issue>) {
    let mut vars = Vars::default();
    let mut issues = Vec::new();
    let Some(post) = ks.root.path(&["spec", "postBuild"]) else {
        return (vars, issues);
    };
    vars.at = Some(post.span);
    let namespace = ks.namespace().unwrap_or("");
    for entry in post
        .get("substituteFrom")
        .and_then(Node::as_seq)
        .into_iter()
        .flatten()
    {
        let kind = entry.str_at(&["kind"]).unwrap_or("");
        let name = entry.str_at(&["name"]).unwrap_or("");
        let optional = entry
            .get("optional")
            .and_then(Node::as_bool_lenient)
            .unwrap_or(false);
        if kind != "ConfigMap" && kind != "Secret" {
            issues.push(issue_at(
                sources,
                entry.span,
                format!("substituteFrom kind {kind:?} is not ConfigMap or Secret; Flux ignores it"),
            ));
            continue;
        }
        let Some(source) = lookup(kind, namespace, name) else {
            // Even an optional source may exist in the cluster only.
            vars.incomplete = true;
            if !optional {
                issues.push(issue_at(
                    sources,
                    entry.span,
                    format!(
                        "substituteFrom {kind}/{name} is not in the repository and not optional: \
                         Flux fails this Kustomization unless it exists in the cluster"
                    ),
                ));
            }
            continue;
        };
        for (key, value) in data::entries(source) {
            if !valid_name(&key) {
                issues.push(issue_at(
                    sources,
                    value.node().span,
                    invalid_name_message(&key, &source.id()),
                ));
                continue;
            }
            let var = match value {
                DataValue::Text { text, node } => Var {
                    value: text.replace('\n', ""),
                    defined_at: Some(node.span),
                    unknown: false,
                },
                DataValue::Unknown { node, .. } => Var {
                    value: String::new(),
                    defined_at: Some(node.span),
                    unknown: true,
                },
                DataValue::Invalid { node, message } => {
                    issues.push(issue_at(sources, node.span, message));
                    Var {
                        value: String::new(),
                        defined_at: Some(node.span),
                        unknown: true,
                    }
                }
            };
            vars.map.insert(key, var);
        }
    }
    for (key, value) in post
        .get("substitute")
        .and_then(Node::as_map)
        .into_iter()
        .flatten()
    {
        let Some(name) = key.scalar_text() else {
            continue;
        };
        if !valid_name(&name) {
            issues.push(issue_at(
                sources,
                key.span,
                invalid_name_message(&name, &ks.id()),
            ));
            continue;
        }
        if !matches!(value.value, Value::Str(_)) {
            // The CRD types `substitute` as map[string]string.
            issues.push(issue_at(
                sources,
                value.span,
                format!("postBuild.substitute.{name} must be a string: quote it"),
            ));
        }
        vars.map.insert(
            name,
            Var {
                value: value.scalar_text().unwrap_or_default().replace('\n', ""),
                defined_at: Some(value.span),
                unknown: false,
            },
        );
    }
    (vars, issues)
}

/// Applies the variables to every string scalar and mapping key of `obj`,
/// unless it opts out with the label or annotation
/// `kustomize.toolkit.fluxcd.io/substitute: disabled`. A plain scalar that
/// changed is typed again (`replicas: ${N}` becomes a number). A scalar
/// with bad syntax is left as written and reported; the others are still
/// substituted. Flux would reject the whole object in that case.
pub fn substitute(sources: &SourceMap, obj: &mut Object, vars: &Vars) -> Vec<Issue> {
    let mut issues = Vec::new();
    if !vars.is_active() || is_disabled(&obj.root) {
        return issues;
    }
    let mut changed = 0usize;
    subst_node(&mut obj.root, vars, sources, &mut issues, &mut changed);
    if changed > 0 {
        obj.push_step(
            StepKind::Substitution,
            format!("postBuild substitution changed {changed} value(s)"),
            vars.at,
        );
    }
    issues
}

fn is_disabled(root: &Node) -> bool {
    ["labels", "annotations"]
        .iter()
        .any(|field| root.str_at(&["metadata", field, DISABLE_KEY]) == Some("disabled"))
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

fn invalid_name_message(name: &str, from: &str) -> String {
    format!(
        "variable name {name:?} from {from} is invalid (must match ^[_[:alpha:]][_[:alpha:][:digit:]]*$): \
         Flux fails substitution for the whole Kustomization"
    )
}

fn issue_at(sources: &SourceMap, span: Span, message: impl Into<String>) -> Issue {
    Issue {
        gap: None,
        path: sources.path(span.file).display().to_string(),
        line: span.line,
        col: span.col,
        message: message.into(),
    }
}

fn subst_node(
    node: &mut Node,
    vars: &Vars,
    sources: &SourceMap,
    issues: &mut Vec<Issue>,
    changed: &mut usize,
) {
    match &mut node.value {
        Value::Str(_) => subst_scalar(node, vars, sources, issues, changed, true),
        Value::Seq(items) => {
            for item in items {
                subst_node(item, vars, sources, issues, changed);
            }
        }
        Value::Map(entries) => {
            for (k, v) in entries {
                if matches!(k.value, Value::Str(_)) {
                    // Keys stay strings: sigs.k8s.io/yaml turns every key
                    // into a JSON string.
                    subst_scalar(k, vars, sources, issues, changed, false);
                }
                subst_node(v, vars, sources, issues, changed);
            }
        }
        Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => {}
    }
}

fn subst_scalar(
    node: &mut Node,
    vars: &Vars,
    sources: &SourceMap,
    issues: &mut Vec<Issue>,
    changed: &mut usize,
    retype: bool,
) {
    let Value::Str(text) = &node.value else {
        return;
    };
    if !text.contains('$') {
        return;
    }
    let expanded = match expand(text, vars) {
        Ok(e) => e,
        Err(message) => {
            issues.push(issue_at(
                sources,
                node.span,
                format!("variable substitution failed in {text:?}: {message}"),
            ));
            return;
        }
    };
    if expanded.text == *text && expanded.uses.is_empty() {
        return;
    }
    *changed += 1;
    if let Some(origin) = origin_of(&expanded.uses, &expanded.undefined, vars) {
        node.origin = Some(Arc::new(origin));
        // A value we cannot know (SOPS, a source only in the cluster)
        // keeps its `${...}` text: an empty string would be a guess, and
        // a wrong one that rules would then report on.
        if expanded.unresolved {
            return;
        }
    }
    node.value = if retype && node.style == Style::Plain {
        resolve_plain(&expanded.text).unwrap_or(Value::Str(expanded.text))
    } else {
        Value::Str(expanded.text)
    };
}

/// The variable reported for a scalar: the first one (outermost first)
/// that is defined, else the first one referenced. Unknown when any
/// variable consulted is unknown, since its real value could change which
/// default applies.
fn origin_of(uses: &[String], undefined: &[String], vars: &Vars) -> Option<Origin> {
    let first = uses.first()?;
    let unknown = uses.iter().any(|u| match vars.get(u) {
        Some(v) => v.unknown,
        None => vars.incomplete,
    });
    let (variable, defined_at) = uses
        .iter()
        .find_map(|u| vars.get(u).map(|v| (u.clone(), v.defined_at)))
        .unwrap_or_else(|| (first.clone(), None));
    Some(Origin::Substituted {
        variable,
        defined_at,
        unknown,
        undefined: undefined.to_vec(),
    })
}

/// The result of expanding one string.
#[derive(Debug, PartialEq)]
struct Expanded {
    text: String,
    /// Variables referenced, outermost first.
    uses: Vec<String>,
    /// Variables used without a default that nothing defines.
    undefined: Vec<String>,
    unresolved: bool,
}

/// Variables met while evaluating.
#[derive(Default)]
struct Trace {
    uses: Vec<String>,
    undefined: Vec<String>,
    /// A variable's value is not in the repository (SOPS, or no default
    /// and a source that only the cluster has).
    unresolved: bool,
}

fn expand(text: &str, vars: &Vars) -> Result<Expanded, String> {
    let ast = Parser::new(text).parse()?;
    let mut trace = Trace::default();
    let mut out = String::new();
    for node in &ast {
        eval(node, vars, &mut trace, &mut out);
    }
    Ok(Expanded {
        text: out,
        uses: trace.uses,
        undefined: trace.undefined,
        unresolved: trace.unresolved,
    })
}

// ---- Parser: a port of fluxcd/pkg envsubst/parse ----

#[derive(Debug, PartialEq)]
enum Ast {
    Text(String),
    Func {
        /// The operator (`:-`, `=`, `//`, ...); empty for `${name}`.
        name: String,
        param: String,
        args: Vec<Ast>,
    },
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Token {
    Illegal,
    Eof,
    Ident,
    Lbrack,
    Rbrack,
}

const SCAN_IDENT: u8 = 1;
const SCAN_LBRACK: u8 = 2;
const SCAN_RBRACK: u8 = 4;
const SCAN_ESCAPE: u8 = 8;

const ESC_DOLLAR: u8 = 1;
const ESC_BACKSLASH: u8 = 2;
const ESC_ALL: u8 = ESC_DOLLAR | ESC_BACKSLASH;

type Accept = fn(char, usize) -> bool;

/// Works on chars where Go works on bytes; the accept functions only
/// test positions against ASCII operators, so the two agree.
struct Parser {
    buf: Vec<char>,
    pos: usize,
    start: usize,
    width: usize,
    mode: u8,
    escape: u8,
    accept: Accept,
    depth: usize,
}

/// Nested `${...}` beyond this is refused, so hostile input cannot
/// exhaust the stack.
const MAX_NESTING: usize = 64;

const BAD: &str = "bad substitution";

impl Parser {
    fn new(text: &str) -> Parser {
        Parser {
            buf: text.chars().collect(),
            pos: 0,
            start: 0,
            width: 0,
            mode: 0,
            escape: 0,
            accept: accept_rune,
            depth: 0,
        }
    }

    fn read(&mut self) -> Option<char> {
        match self.buf.get(self.pos) {
            Some(&c) => {
                self.width = 1;
                self.pos += 1;
                Some(c)
            }
            None => {
                self.width = 0;
                None
            }
        }
    }

    fn unread(&mut self) {
        self.pos -= self.width;
    }

    fn peek(&mut self) -> Option<char> {
        let r = self.read();
        self.unread();
        r
    }

    /// Drops the escape character just read; the escaped one becomes
    /// part of the token.
    fn skip(&mut self) {
        self.buf.remove(self.pos - 1);
    }

    fn string(&self) -> String {
        self.buf[self.start..self.pos].iter().collect()
    }

    fn scan(&mut self) -> Token {
        self.start = self.pos;
        let Some(r) = self.read() else {
            return Token::Eof;
        };
        if self.scan_lbrack(r) {
            Token::Lbrack
        } else if self.scan_rbrack(r) {
            Token::Rbrack
        } else if self.scan_ident(r) {
            Token::Ident
        } else {
            Token::Illegal
        }
    }

    fn scan_ident(&mut self, r: char) -> bool {
        if self.mode & SCAN_IDENT == 0 {
            return false;
        }
        if self.scan_escaped(r) {
            self.skip();
        } else if !(self.accept)(r, self.pos - self.start) {
            return false;
        }
        loop {
            let Some(r) = self.read() else {
                self.unread();
                break;
            };
            if self.scan_lbrack(r) {
                self.unread();
                self.unread();
                break;
            }
            if self.scan_escaped(r) {
                self.skip();
                continue;
            }
            if !(self.accept)(r, self.pos - self.start) {
                self.unread();
                break;
            }
        }
        true
    }

    fn scan_lbrack(&mut self, r: char) -> bool {
        if self.mode & SCAN_LBRACK == 0 || r != '$' {
            return false;
        }
        if self.read() == Some('{') {
            return true;
        }
        self.unread();
        false
    }

    fn scan_rbrack(&self, r: char) -> bool {
        self.mode & SCAN_RBRACK != 0 && r == '}'
    }

    fn scan_escaped(&mut self, r: char) -> bool {
        if self.mode & SCAN_ESCAPE == 0 {
            return false;
        }
        if r == '$' && self.escape & ESC_DOLLAR != 0 && self.peek() == Some('$') {
            return true;
        }
        r == '\\' && self.escape & ESC_BACKSLASH != 0 && matches!(self.peek(), Some('/' | '\\'))
    }

    fn parse(mut self) -> Result<Vec<Ast>, String> {
        let mut out = Vec::new();
        loop {
            self.accept = accept_rune;
            self.mode = SCAN_IDENT | SCAN_LBRACK | SCAN_ESCAPE;
            self.escape = ESC_DOLLAR;
            match self.scan() {
                Token::Ident => out.push(Ast::Text(self.string())),
                Token::Eof => return Ok(out),
                Token::Lbrack => out.push(self.parse_func()?),
                Token::Illegal | Token::Rbrack => return Err(BAD.into()),
            }
        }
    }

    fn parse_func(&mut self) -> Result<Ast, String> {
        if self.depth >= MAX_NESTING {
            return Err(format!("more than {MAX_NESTING} nested substitutions"));
        }
        self.depth += 1;
        let result = self.parse_func_inner();
        self.depth -= 1;
        result
    }

    fn parse_func_inner(&mut self) -> Result<Ast, String> {
        self.escape = ESC_ALL;
        if self.peek() == Some('#') {
            return self.parse_len_func();
        }
        self.accept = accept_ident;
        self.mode = SCAN_IDENT;
        if self.scan() != Token::Ident {
            return Err("unable to parse variable name".into());
        }
        let name = self.string();
        match self.peek() {
            Some(':') => return self.parse_default_or_substr(name),
            Some('=') => return self.parse_default_func(name),
            Some(',' | '^') => return self.parse_operator_only(name, accept_casing),
            Some('/') => return self.parse_replace_func(name),
            Some('#') => return self.parse_remove_func(name, accept_hash),
            Some('%') => return self.parse_remove_func(name, accept_percent),
            _ => {}
        }
        self.accept = accept_ident;
        self.mode = SCAN_RBRACK;
        if self.scan() != Token::Rbrack {
            return Err("missing closing brace".into());
        }
        Ok(Ast::Func {
            name: String::new(),
            param: name,
            args: Vec::new(),
        })
    }

    fn parse_param(&mut self, accept: Accept, mode: u8) -> Result<Ast, String> {
        self.accept = accept;
        self.mode = mode | SCAN_LBRACK;
        match self.scan() {
            Token::Lbrack => self.parse_func(),
            Token::Ident | Token::Rbrack => Ok(Ast::Text(self.string())),
            Token::Illegal | Token::Eof => {
                Err("unable to parse substitution within function".into())
            }
        }
    }

    fn operator(&mut self, accept: Accept, err: &str) -> Result<String, String> {
        self.accept = accept;
        self.mode = SCAN_IDENT;
        if self.scan() != Token::Ident {
            return Err(err.into());
        }
        Ok(self.string())
    }

    fn parse_default_or_substr(&mut self, param: String) -> Result<Ast, String> {
        self.read();
        let r = self.peek();
        self.unread();
        match r {
            Some('=' | '-' | '?' | '+') => self.parse_default_func(param),
            _ => self.parse_substr_func(param),
        }
    }

    fn parse_substr_func(&mut self, param: String) -> Result<Ast, String> {
        let name = self.operator(accept_one_colon, BAD)?;
        let mut args = vec![self.parse_param(reject_colon_close, SCAN_IDENT)?];
        self.accept = accept_colon;
        self.mode = SCAN_IDENT | SCAN_RBRACK;
        match self.scan() {
            Token::Rbrack => return Ok(Ast::Func { name, param, args }),
            Token::Ident => {}
            _ => return Err(BAD.into()),
        }
        args.push(self.parse_param(accept_not_closing, SCAN_IDENT)?);
        self.consume_rbrack()?;
        Ok(Ast::Func { name, param, args })
    }

    fn parse_remove_func(&mut self, param: String, accept: Accept) -> Result<Ast, String> {
        let name = self.operator(accept, BAD)?;
        let args = vec![self.parse_param(accept_not_closing, SCAN_IDENT)?];
        self.consume_rbrack()?;
        Ok(Ast::Func { name, param, args })
    }

    fn parse_replace_func(&mut self, param: String) -> Result<Ast, String> {
        let name = self.operator(accept_replace, BAD)?;
        let mut args = Vec::new();
        if self.peek() == Some('/') {
            args.push(Ast::Text(String::new()));
        } else {
            args.push(self.parse_param(accept_not_slash, SCAN_IDENT | SCAN_ESCAPE)?);
        }
        self.operator(accept_slash, BAD)?;
        if self.peek() != Some('}') {
            args.push(self.parse_param(accept_not_closing, SCAN_IDENT | SCAN_ESCAPE)?);
        }
        self.consume_rbrack()?;
        Ok(Ast::Func { name, param, args })
    }

    fn parse_default_func(&mut self, param: String) -> Result<Ast, String> {
        let accept: Accept = if self.peek() == Some('=') {
            accept_one_equal
        } else {
            accept_default
        };
        let name = self.operator(accept, "unable to parse default function")?;
        let mut args = Vec::new();
        while self.peek() != Some('}') {
            args.push(self.parse_param(accept_not_closing, SCAN_IDENT)?);
        }
        self.consume_rbrack()?;
        Ok(Ast::Func { name, param, args })
    }

    /// `${v,}`, `${v^^}` and friends: an operator and nothing else.
    fn parse_operator_only(&mut self, param: String, accept: Accept) -> Result<Ast, String> {
        let name = self.operator(accept, BAD)?;
        self.consume_rbrack()?;
        Ok(Ast::Func {
            name,
            param,
            args: Vec::new(),
        })
    }

    fn parse_len_func(&mut self) -> Result<Ast, String> {
        let name = self.operator(accept_one_hash, BAD)?;
        let param = self.operator(accept_ident, BAD)?;
        self.consume_rbrack()?;
        Ok(Ast::Func {
            name,
            param,
            args: Vec::new(),
        })
    }

    fn consume_rbrack(&mut self) -> Result<(), String> {
        self.mode = SCAN_RBRACK;
        if self.scan() != Token::Rbrack {
            return Err(BAD.into());
        }
        Ok(())
    }
}

fn accept_rune(_: char, _: usize) -> bool {
    true
}
fn accept_ident(r: char, _: usize) -> bool {
    r.is_alphanumeric() || r == '_'
}
fn accept_colon(r: char, _: usize) -> bool {
    r == ':'
}
fn accept_one_hash(r: char, i: usize) -> bool {
    r == '#' && i == 1
}
fn accept_not_closing(r: char, _: usize) -> bool {
    r != '}'
}
fn accept_hash(r: char, i: usize) -> bool {
    r == '#' && i < 3
}
fn accept_percent(r: char, i: usize) -> bool {
    r == '%' && i < 3
}
fn accept_default(r: char, i: usize) -> bool {
    (i == 1 && r == ':') || (i == 2 && matches!(r, '=' | '-' | '?' | '+'))
}
fn accept_replace(r: char, i: usize) -> bool {
    (i == 1 && r == '/') || (i == 2 && matches!(r, '/' | '#' | '%'))
}
fn accept_one_equal(r: char, i: usize) -> bool {
    i == 1 && r == '='
}
fn accept_one_colon(r: char, i: usize) -> bool {
    i == 1 && r == ':'
}
fn reject_colon_close(r: char, _: usize) -> bool {
    r != ':' && r != '}'
}
fn accept_slash(r: char, _: usize) -> bool {
    r == '/'
}
fn accept_not_slash(r: char, _: usize) -> bool {
    r != '/'
}
fn accept_casing(r: char, i: usize) -> bool {
    (r == ',' || r == '^') && i < 3
}

// ---- Evaluation: fluxcd/pkg envsubst template.go and funcs.go ----

fn eval(node: &Ast, vars: &Vars, trace: &mut Trace, out: &mut String) {
    match node {
        Ast::Text(t) => out.push_str(t),
        Ast::Func { name, param, args } => {
            // Non-strict mode: an undefined variable reads as "".
            trace.uses.push(param.clone());
            match vars.get(param) {
                Some(v) if v.unknown => trace.unresolved = true,
                None if args.is_empty() && vars.incomplete => trace.unresolved = true,
                None if args.is_empty() => trace.undefined.push(param.clone()),
                _ => {}
            }
            let args: Vec<String> = args
                .iter()
                .map(|a| {
                    let mut s = String::new();
                    eval(a, vars, trace, &mut s);
                    s
                })
                .collect();
            let value = vars.get(param).map(|v| v.value.as_str()).unwrap_or("");
            out.push_str(&apply(name, value, &args));
        }
    }
}

fn apply(name: &str, s: &str, args: &[String]) -> String {
    let arg = |i: usize| args.get(i).map(String::as_str);
    match name {
        "," => first_char(s, |c| c.to_lowercase().collect()),
        ",," => s.to_lowercase(),
        "^" => first_char(s, |c| c.to_uppercase().collect()),
        "^^" => s.to_uppercase(),
        "#" if args.is_empty() => s.len().to_string(),
        "#" => trim_prefix(s, arg(0), false),
        "##" => trim_prefix(s, arg(0), true),
        "%" => trim_suffix(s, arg(0), false),
        "%%" => trim_suffix(s, arg(0), true),
        ":" => substr(s, args),
        "/#" => match (arg(0), arg(1)) {
            (Some(p), Some(r)) if s.starts_with(p) => s.replacen(p, r, 1),
            _ => s.to_string(),
        },
        "/%" => match (arg(0), arg(1)) {
            (Some(p), Some(r)) if s.ends_with(p) => format!("{}{r}", &s[..s.len() - p.len()]),
            _ => s.to_string(),
        },
        "/" => match arg(0) {
            Some(p) => go_replace(s, p, arg(1).unwrap_or(""), Some(1)),
            None => s.to_string(),
        },
        "//" => match arg(0) {
            Some(p) => go_replace(s, p, arg(1).unwrap_or(""), None),
            None => s.to_string(),
        },
        // `=`, `:=`, `:-`, and also `:?`, `:+`, `-`, `+` and plain `${v}`:
        // the fork maps them all to "the value, or the args if empty".
        _ if s.is_empty() && !args.is_empty() => args.concat(),
        _ => s.to_string(),
    }
}

fn first_char(s: &str, f: impl Fn(char) -> String) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => f(c) + chars.as_str(),
        None => String::new(),
    }
}

/// Go's `strings.Replace`: an empty pattern matches before every char.
fn go_replace(s: &str, pat: &str, with: &str, limit: Option<usize>) -> String {
    if pat.is_empty() {
        let mut out = String::new();
        let mut n = 0;
        for (i, c) in s.char_indices() {
            if limit.is_none_or(|l| n < l) {
                out.push_str(with);
                n += 1;
            } else {
                out.push_str(&s[i..]);
                return out;
            }
            out.push(c);
        }
        if limit.is_none_or(|l| n < l) {
            out.push_str(with);
        }
        return out;
    }
    match limit {
        Some(l) => s.replacen(pat, with, l),
        None => s.replace(pat, with),
    }
}

/// Byte slicing as Go does it, without splitting a char in two.
fn byte_slice(s: &str, from: usize, to: usize) -> String {
    String::from_utf8_lossy(&s.as_bytes()[from..to]).into_owned()
}

fn substr(s: &str, args: &[String]) -> String {
    let Some(Ok(mut pos)) = args.first().map(|a| a.parse::<i64>()) else {
        return s.to_string();
    };
    let len = s.len() as i64;
    if pos < 0 {
        pos = (len + pos).max(0);
    }
    let Some(length) = args.get(1) else {
        return if pos < len {
            byte_slice(s, pos as usize, s.len())
        } else {
            String::new()
        };
    };
    let Ok(length) = length.parse::<i64>() else {
        return s.to_string();
    };
    if length < 0 {
        let end = len + length;
        return if end < pos {
            String::new()
        } else {
            byte_slice(s, pos as usize, end as usize)
        };
    }
    if pos.saturating_add(length) >= len {
        return if pos < len {
            byte_slice(s, pos as usize, s.len())
        } else {
            String::new()
        };
    }
    byte_slice(s, pos as usize, (pos + length) as usize)
}

/// Glob trims work on every prefix of the value; past this length the
/// cost is not worth it for a linter and the value is kept as is.
const MAX_TRIM_LEN: usize = 4096;

fn trim_prefix(s: &str, pattern: Option<&str>, longest: bool) -> String {
    match pattern {
        Some(p) if s.len() <= MAX_TRIM_LEN => trim_glob(s, p, longest),
        _ => s.to_string(),
    }
}

fn trim_suffix(s: &str, pattern: Option<&str>, longest: bool) -> String {
    match pattern {
        Some(p) if s.len() <= MAX_TRIM_LEN => {
            let rev: String = s.chars().rev().collect();
            let rpat: String = p.chars().rev().collect();
            trim_glob(&rev, &rpat, longest).chars().rev().collect()
        }
        _ => s.to_string(),
    }
}

/// funcs.go `trimShortest`/`trimLongest`: both try prefixes from the
/// longest down and never the empty one.
fn trim_glob(s: &str, pattern: &str, longest: bool) -> String {
    let Some(glob) = Glob::parse(pattern) else {
        return s.to_string();
    };
    let mut matched = None;
    for end in (1..=s.len()).rev().filter(|e| s.is_char_boundary(*e)) {
        if glob.matches(&s[..end]) {
            matched = Some(end);
            if longest {
                break;
            }
        }
    }
    match matched {
        Some(end) => s[end..].to_string(),
        None => s.to_string(),
    }
}

/// Go's `path.Match` patterns: `*` and `?` (neither crosses `/`),
/// `[...]` classes with `^` negation and ranges, `\` escapes.
enum GlobTok {
    Star,
    Any,
    Lit(char),
    Class(bool, Vec<(char, char)>),
}

struct Glob(Vec<GlobTok>);

impl Glob {
    fn parse(pattern: &str) -> Option<Glob> {
        let mut toks = Vec::new();
        let mut chars = pattern.chars().peekable();
        while let Some(c) = chars.next() {
            toks.push(match c {
                '*' => GlobTok::Star,
                '?' => GlobTok::Any,
                '\\' => GlobTok::Lit(chars.next()?),
                '[' => {
                    let negated = chars.next_if_eq(&'^').is_some();
                    let mut ranges = Vec::new();
                    loop {
                        let lo = match chars.next()? {
                            ']' if !ranges.is_empty() => break,
                            '\\' => chars.next()?,
                            '-' | ']' => return None,
                            c => c,
                        };
                        let hi = if chars.next_if_eq(&'-').is_some() {
                            match chars.next()? {
                                '\\' => chars.next()?,
                                '-' | ']' => return None,
                                c => c,
                            }
                        } else {
                            lo
                        };
                        ranges.push((lo, hi));
                    }
                    GlobTok::Class(negated, ranges)
                }
                c => GlobTok::Lit(c),
            });
        }
        Some(Glob(toks))
    }

    /// Dynamic programming over (token, char), so stars cannot blow up.
    fn matches(&self, s: &str) -> bool {
        let chars: Vec<char> = s.chars().collect();
        let mut row = vec![false; chars.len() + 1];
        row[0] = true;
        for tok in &self.0 {
            let mut next = vec![false; chars.len() + 1];
            for i in 0..=chars.len() {
                match tok {
                    GlobTok::Star => {
                        next[i] = row[i] || (i > 0 && next[i - 1] && chars[i - 1] != '/');
                    }
                    _ if i == 0 => {}
                    GlobTok::Any => next[i] = row[i - 1] && chars[i - 1] != '/',
                    GlobTok::Lit(c) => next[i] = row[i - 1] && chars[i - 1] == *c,
                    GlobTok::Class(negated, ranges) => {
                        let c = chars[i - 1];
                        let hit = ranges.iter().any(|(lo, hi)| *lo <= c && c <= *hi);
                        next[i] = row[i - 1] && hit != *negated;
                    }
                }
            }
            row = next;
        }
        row[chars.len()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::FileId;
    use std::path::PathBuf;

    use crate::source::test_repo::TestRepo as Repo;

    impl Repo {
        fn vars(&self) -> (Vars, Vec<Issue>) {
            let ks = self.find("Kustomization", "flux-system", "apps").unwrap();
            collect_vars(&self.sources, ks, &|k, ns, n| self.find(k, ns, n))
        }

        /// Substitutes into the object named `name` with the vars of
        /// Kustomization `apps`.
        fn render(&self, name: &str) -> (Object, Vec<Issue>) {
            let (vars, issues) = self.vars();
            assert!(issues.is_empty(), "{issues:?}");
            let mut obj = self
                .objects
                .iter()
                .find(|o| o.name() == name)
                .unwrap()
                .clone();
            let issues = substitute(&self.sources, &mut obj, &vars);
            (obj, issues)
        }
    }

    const KS: &str = "\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  postBuild:
    substitute:
      DOMAIN: example.org
      REPLICAS: \"3\"
    substituteFrom:
      - kind: ConfigMap
        name: settings
      - kind: Secret
        name: secrets
      - kind: ConfigMap
        name: maybe
        optional: true
";

    const SETTINGS: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: flux-system
data:
  DOMAIN: from-configmap.org
  TZ: Europe/Berlin
  MULTI: |
    a
    b
";

    const SECRETS: &str = "\
apiVersion: v1
kind: Secret
metadata:
  name: secrets
  namespace: flux-system
data:
  TZ: VVRD
stringData:
  PASSWORD: hunter2
";

    fn expand_with(text: &str, vars: &[(&str, &str)]) -> Result<String, String> {
        let vars = Vars {
            map: vars
                .iter()
                .map(|(k, v)| {
                    (
                        k.to_string(),
                        Var {
                            value: v.to_string(),
                            defined_at: None,
                            unknown: false,
                        },
                    )
                })
                .collect(),
            ..Vars::default()
        };
        expand(text, &vars).map(|e| e.text)
    }

    #[test]
    fn envsubst_forms() {
        let v = [("A", "a"), ("E", ""), ("B", "b")];
        let cases = [
            ("${A}", "a"),
            ("x-${A}-y", "x-a-y"),
            ("${U}", ""),
            ("${U:=d}", "d"),
            ("${U:-d}", "d"),
            ("${U=d}", "d"),
            ("${A:-d}", "a"),
            ("${E:-d}", "d"),
            ("${U:=${B:=x}}", "b"),
            ("${U:=${V:=x}}", "x"),
            ("${U:-pre-${B}-post}", "pre-b-post"),
            ("$${A}", "${A}"),
            ("$$", "$"),
            ("pa$$word", "pa$word"),
            ("$A and $", "$A and $"),
            ("${A^^}", "A"),
            ("${#A}", "1"),
            ("${U:+alt}", "alt"),
        ];
        for (input, want) in cases {
            assert_eq!(expand_with(input, &v).as_deref(), Ok(want), "{input}");
        }
    }

    #[test]
    fn envsubst_functions() {
        let v = [("P", "path/to/file.tar.gz"), ("S", "hello")];
        let cases = [
            ("${S:1:3}", "ell"),
            ("${S:-3}", "hello"),
            ("${S:1:-1}", "ell"),
            ("${S/l/L}", "heLlo"),
            ("${S//l/L}", "heLLo"),
            ("${S/#he/HE}", "HEllo"),
            ("${S/%lo/LO}", "helLO"),
            ("${P#*/}", "to/file.tar.gz"),
            // `*` never crosses `/` in Go's path.Match.
            ("${P##*/}", "to/file.tar.gz"),
            ("${P%.*}", "path/to/file.tar"),
            ("${P%%.*}", "path/to/file"),
            ("${S,}", "hello"),
            ("${S^}", "Hello"),
        ];
        for (input, want) in cases {
            assert_eq!(expand_with(input, &v).as_deref(), Ok(want), "{input}");
        }
    }

    #[test]
    fn envsubst_errors() {
        for bad in ["${A", "${A:-x", "${A-x}", "${}", "${A x}", "${-}"] {
            assert!(expand_with(bad, &[("A", "a")]).is_err(), "{bad}");
        }
        let deep = format!("{}x{}", "${A:=".repeat(10_000), "}".repeat(10_000));
        assert!(expand_with(&deep, &[]).is_err());
        let ok = format!("{}x{}", "${A:=".repeat(60), "}".repeat(60));
        assert_eq!(expand_with(&ok, &[]).as_deref(), Ok("x"));
    }

    #[test]
    fn inline_and_sources_in_order_inline_wins() {
        let repo = Repo::new(&[
            ("ks.yaml", KS),
            ("settings.yaml", SETTINGS),
            ("secrets.yaml", SECRETS),
        ]);
        let (vars, issues) = repo.vars();
        assert!(issues.is_empty(), "{issues:?}");
        // The optional `maybe` is not in the repo but may be in the cluster.
        assert!(vars.incomplete);
        // Inline beats the ConfigMap.
        assert_eq!(vars.get("DOMAIN").unwrap().value, "example.org");
        // The Secret (later) beats the ConfigMap (earlier); data is base64.
        assert_eq!(vars.get("TZ").unwrap().value, "UTC");
        assert_eq!(vars.get("PASSWORD").unwrap().value, "hunter2");
        // Newlines are removed, as Flux does.
        assert_eq!(vars.get("MULTI").unwrap().value, "ab");
        // Definition spans point at the values.
        let domain = vars.get("DOMAIN").unwrap().defined_at.unwrap();
        assert_eq!((domain.line, domain.col), (9, 15));
        let tz = vars.get("TZ").unwrap().defined_at.unwrap();
        assert_eq!(repo.sources.path(tz.file), PathBuf::from("secrets.yaml"));
        assert_eq!((tz.line, tz.col), (7, 7));
        let pw = vars.get("PASSWORD").unwrap().defined_at.unwrap();
        assert_eq!((pw.line, pw.col), (9, 13));
    }

    #[test]
    fn missing_sources_optional_or_not() {
        let repo = Repo::new(&[("ks.yaml", KS), ("settings.yaml", SETTINGS)]);
        let (vars, issues) = repo.vars();
        // `secrets` is missing and required; `maybe` is optional, so no
        // issue, but either may exist in the cluster only.
        assert_eq!(issues.len(), 1, "{issues:?}");
        assert!(issues[0].message.contains("Secret/secrets"));
        assert_eq!((issues[0].path.as_str(), issues[0].line), ("ks.yaml", 14));
        assert!(vars.incomplete);
        assert_eq!(vars.get("TZ").unwrap().value, "Europe/Berlin");
    }

    #[test]
    fn sops_values_are_unknown_not_errors() {
        let sops_secret = "\
apiVersion: v1
kind: Secret
metadata:
  name: secrets
  namespace: flux-system
stringData:
  PASSWORD: ENC[AES256_GCM,data:abc,type:str]
sops:
  version: 3.8.1
";
        let ks = KS.to_string();
        let repo = Repo::new(&[
            ("ks.yaml", &ks),
            ("settings.yaml", SETTINGS),
            ("secrets.yaml", sops_secret),
        ]);
        let (vars, issues) = repo.vars();
        assert!(issues.is_empty(), "{issues:?}");
        let pw = vars.get("PASSWORD").unwrap();
        assert!(pw.unknown);
        assert_eq!(pw.value, "");

        let app = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data:
  password: ${PASSWORD:=default}
";
        let repo = Repo::new(&[
            ("ks.yaml", &ks),
            ("settings.yaml", SETTINGS),
            ("secrets.yaml", sops_secret),
            ("app.yaml", app),
        ]);
        let mut obj = repo.find("ConfigMap", "", "app").unwrap().clone();
        let (vars, _) = repo.vars();
        assert!(substitute(&repo.sources, &mut obj, &vars).is_empty());
        let node = obj.root.path(&["data", "password"]).unwrap();
        match node.origin.as_deref() {
            Some(Origin::Substituted {
                variable, unknown, ..
            }) => {
                assert_eq!(variable, "PASSWORD");
                assert!(unknown);
            }
            other => panic!("{other:?}"),
        }
    }

    const APP: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    ${DOMAIN}: yes
spec:
  replicas: ${REPLICAS}
  template:
    spec:
      containers:
        - name: web
          image: \"nginx:${TAG:=1.27}\"
          args: [\"--tz=${TZ}\", '$${KEEP}', \"--x=${UNSET}\"]
          env:
            - name: QUOTED
              value: \"${REPLICAS}\"
            - name: EMPTY
              value: ${UNSET}
            - name: BLOCK
              value: |
                ${REPLICAS}
";

    #[test]
    fn substitutes_with_retyping_and_provenance() {
        let repo = Repo::new(&[
            ("ks.yaml", KS),
            ("settings.yaml", SETTINGS),
            ("secrets.yaml", SECRETS),
            ("app.yaml", APP),
        ]);
        let (obj, issues) = repo.render("web");
        assert!(issues.is_empty(), "{issues:?}");
        let j = obj.root.to_json();
        assert_eq!(j["spec"]["replicas"], serde_json::json!(3));
        assert_eq!(j["metadata"]["labels"]["example.org"], "yes");
        let c = &j["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(c["image"], "nginx:1.27");
        // The optional `maybe` source is not in the repo, so the
        // cluster may define UNSET: its use stays as written.
        assert_eq!(
            c["args"],
            serde_json::json!(["--tz=UTC", "${KEEP}", "--x=${UNSET}"])
        );
        assert_eq!(c["env"][0]["value"], "3");
        assert_eq!(c["env"][1]["value"], "${UNSET}");
        assert_eq!(c["env"][2]["value"], "3\n");
        let step = obj.chain.last().unwrap();
        assert_eq!(step.kind, StepKind::Substitution);
        assert_eq!(step.at.map(|s| (s.file, s.line)), Some((FileId(0), 8)));

        // Use site keeps its span; the origin points at the definition.
        let replicas = obj.root.path(&["spec", "replicas"]).unwrap();
        assert_eq!((replicas.span.line, replicas.span.col), (8, 13));
        assert_eq!(
            repo.sources.path(replicas.span.file),
            PathBuf::from("app.yaml")
        );
        let Some(Origin::Substituted {
            variable,
            defined_at: Some(def),
            unknown: false,
            ..
        }) = replicas.origin.as_deref()
        else {
            panic!("{:?}", replicas.origin);
        };
        assert_eq!(variable, "REPLICAS");
        assert_eq!(repo.sources.path(def.file), PathBuf::from("ks.yaml"));
        assert_eq!((def.line, def.col), (10, 17));

        // A default: the variable is named, nothing defines it, and the
        // optional source missing from the repo might.
        let image = obj
            .root
            .path(&["spec", "template", "spec", "containers"])
            .and_then(|c| c.as_seq())
            .map(|c| c[0].get("image").unwrap().clone())
            .unwrap();
        assert_eq!(
            image.origin.as_deref(),
            Some(&Origin::Substituted {
                variable: "TAG".into(),
                defined_at: None,
                unknown: true,
                undefined: Vec::new(),
            })
        );
        assert_eq!(image.style, Style::Quoted);
    }

    #[test]
    fn opt_out_by_label_or_annotation() {
        for meta in [
            "labels:\n    kustomize.toolkit.fluxcd.io/substitute: disabled",
            "annotations:\n    kustomize.toolkit.fluxcd.io/substitute: disabled",
        ] {
            let app = format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  {meta}\ndata:\n  a: ${{DOMAIN}}\n"
            );
            let repo = Repo::new(&[
                ("ks.yaml", KS),
                ("settings.yaml", SETTINGS),
                ("secrets.yaml", SECRETS),
                ("app.yaml", &app),
            ]);
            let (obj, issues) = repo.render("x");
            assert!(issues.is_empty());
            assert_eq!(obj.root.str_at(&["data", "a"]), Some("${DOMAIN}"));
        }
    }

    #[test]
    fn no_variables_means_no_substitution() {
        let ks = "\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  postBuild:
    substitute: {}
";
        let app = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: ${A:=d}\n";
        let repo = Repo::new(&[("ks.yaml", ks), ("app.yaml", app)]);
        let (obj, _) = repo.render("x");
        assert_eq!(obj.root.str_at(&["data", "a"]), Some("${A:=d}"));
    }

    #[test]
    fn bad_syntax_is_reported_and_others_still_substituted() {
        let app = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: x
data:
  bad: \"${DOMAIN\"
  good: ${DOMAIN}
";
        let repo = Repo::new(&[
            ("ks.yaml", KS),
            ("settings.yaml", SETTINGS),
            ("secrets.yaml", SECRETS),
            ("app.yaml", app),
        ]);
        let (obj, issues) = repo.render("x");
        assert_eq!(issues.len(), 1);
        assert_eq!(
            (issues[0].path.as_str(), issues[0].line, issues[0].col),
            ("app.yaml", 6, 8)
        );
        assert_eq!(obj.root.str_at(&["data", "bad"]), Some("${DOMAIN"));
        assert_eq!(obj.root.str_at(&["data", "good"]), Some("example.org"));
    }

    #[test]
    fn invalid_inline_values_and_names_are_reported() {
        let ks = "\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  postBuild:
    substitute:
      N: 3
      bad-name: x
";
        let repo = Repo::new(&[("ks.yaml", ks)]);
        let (vars, issues) = repo.vars();
        assert_eq!(issues.len(), 2, "{issues:?}");
        assert_eq!(vars.get("N").unwrap().value, "3");
        assert!(vars.get("bad-name").is_none());
    }
}
