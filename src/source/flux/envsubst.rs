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
    /// (Flux renders them as ""): not those of a default that is not used.
    pub undefined: Vec<String>,
    /// Variables that nothing defines read without a default anywhere,
    /// used or not: kustomize-controller's strict mode (the default since
    /// v1.9, `StrictPostBuildSubstitutions`) fails the Kustomization on
    /// each, because `evalFunc` evaluates a default before using it.
    pub strict_unset: Vec<String>,
    /// Some expression read a value the repository does not hold.
    pub unresolved: bool,
}

/// Expands `text`. `Err` is a syntax error (Flux fails the Kustomization)
/// or a budget hit (message starts with [`BUDGET`]).
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

pub fn expand<'v>(
    text: &str,
    lookup: &dyn Fn(&str) -> Lookup<'v>,
    budget: &mut Budget,
) -> Result<Expanded, String> {
    let mut parser = Parser::new(text);
    let ast = parser.parse()?;
    let mut ev = Eval {
        lookup,
        budget,
        uses: Vec::new(),
        strict_unset: Vec::new(),
        unresolved: false,
    };
    let mut out: Vec<u8> = Vec::new();
    let mut undefined = Vec::new();
    for node in &ast {
        match ev.eval(node)? {
            Val::Known {
                bytes,
                undefined: u,
            } => {
                out.extend_from_slice(&bytes);
                undefined.extend(u);
            }
            Val::Unknown => {
                ev.unresolved = true;
                if let Ast::Func { at: (from, to), .. } = node {
                    out.extend(parser.buf[*from..*to].iter().collect::<String>().bytes());
                }
            }
        }
        ev.check_len(out.len())?;
    }
    let grown = out.len().saturating_sub(text.len());
    if grown > ev.budget.growth_left {
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
    let mut seen = std::collections::HashSet::new();
    v.retain(|x| seen.insert(x.clone()));
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
        /// Where the expression is written, in chars of the input: an
        /// expression whose value is unknown is shown as written.
        at: (usize, usize),
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
    /// Escape characters dropped from tokens. Go's `skip` cuts them out
    /// of the buffer (quadratic on a string of `$$$$…`); marking them
    /// keeps positions stable and the work linear.
    dropped: Vec<bool>,
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
        let buf: Vec<char> = text.chars().collect();
        Parser {
            dropped: vec![false; buf.len()],
            buf,
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
        self.dropped[self.pos - 1] = true;
        self.read();
    }

    fn string(&self) -> String {
        (self.start..self.pos)
            .filter(|&i| !self.dropped[i])
            .map(|i| self.buf[i])
            .collect()
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

    fn parse(&mut self) -> Result<Vec<Ast>, String> {
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
            return Err(format!(
                "{BUDGET}: more than {MAX_NESTING} nested ${{...}} expressions"
            ));
        }
        // `${` was just read.
        let from = self.pos - 2;
        self.depth += 1;
        let result = self.parse_func_inner();
        self.depth -= 1;
        let mut ast = result?;
        if let Ast::Func { at, .. } = &mut ast {
            *at = (from, self.pos);
        }
        Ok(ast)
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
            at: (0, 0),
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
            Token::Rbrack => {
                return Ok(Ast::Func {
                    name,
                    param,
                    args,
                    at: (0, 0),
                });
            }
            Token::Ident => {}
            _ => return Err(BAD.into()),
        }
        args.push(self.parse_param(accept_not_closing, SCAN_IDENT)?);
        self.consume_rbrack()?;
        Ok(Ast::Func {
            name,
            param,
            args,
            at: (0, 0),
        })
    }

    fn parse_remove_func(&mut self, param: String, accept: Accept) -> Result<Ast, String> {
        let name = self.operator(accept, BAD)?;
        let args = vec![self.parse_param(accept_not_closing, SCAN_IDENT)?];
        self.consume_rbrack()?;
        Ok(Ast::Func {
            name,
            param,
            args,
            at: (0, 0),
        })
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
        Ok(Ast::Func {
            name,
            param,
            args,
            at: (0, 0),
        })
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
        Ok(Ast::Func {
            name,
            param,
            args,
            at: (0, 0),
        })
    }

    /// `${v,}`, `${v^^}` and friends: an operator and nothing else.
    fn parse_operator_only(&mut self, param: String, accept: Accept) -> Result<Ast, String> {
        let name = self.operator(accept, BAD)?;
        self.consume_rbrack()?;
        Ok(Ast::Func {
            name,
            param,
            args: Vec::new(),
            at: (0, 0),
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
            at: (0, 0),
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

/// A value while evaluating: bytes, since Go slices strings by byte and
/// `${V:0:1}` may cut a character in two.
enum Val {
    Known {
        bytes: Vec<u8>,
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

impl Eval<'_, '_, '_> {
    fn check_len(&self, len: usize) -> Result<(), String> {
        if len > self.budget.max_value_bytes {
            return Err(format!(
                "{BUDGET}: an expanded value passed {} bytes",
                self.budget.max_value_bytes
            ));
        }
        Ok(())
    }

    fn eval(&mut self, node: &Ast) -> Result<Val, String> {
        let (name, param, args) = match node {
            Ast::Text(t) => {
                return Ok(Val::Known {
                    bytes: t.as_bytes().to_vec(),
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
        let (s, mut undefined): (&[u8], Vec<String>) = match (self.lookup)(param) {
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
                return Ok(Val::Known {
                    bytes: s.to_vec(),
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
                        bytes.extend(b);
                        undefined.extend(u);
                    }
                }
            }
            return Ok(Val::Known { bytes, undefined });
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
                    args.push(bytes);
                }
            }
        }
        let bytes = self.apply(name, s, &args)?;
        self.check_len(bytes.len())?;
        Ok(Val::Known { bytes, undefined })
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

/// Go's `utf8.DecodeRune`: an invalid byte decodes as U+FFFD of width 1.
fn decode_rune(b: &[u8]) -> (char, usize) {
    let width = match b.first() {
        None => return (char::REPLACEMENT_CHARACTER, 0),
        Some(&c) if c < 0x80 => return (c as char, 1),
        Some(&c) if c & 0xE0 == 0xC0 => 2,
        Some(&c) if c & 0xF0 == 0xE0 => 3,
        Some(&c) if c & 0xF8 == 0xF0 => 4,
        Some(_) => 0,
    };
    match b.get(..width).map(std::str::from_utf8) {
        Some(Ok(s)) if width > 0 => (s.chars().next().unwrap_or_default(), width),
        _ => (char::REPLACEMENT_CHARACTER, 1),
    }
}

fn runes(b: &[u8]) -> impl Iterator<Item = (char, usize)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        if i >= b.len() {
            return None;
        }
        let (c, w) = decode_rune(&b[i..]);
        i += w;
        Some((c, w))
    })
}

/// funcs.go `reverse`: by runes, invalid bytes becoming U+FFFD.
fn reverse_runes(b: &[u8]) -> Vec<u8> {
    let rs: Vec<char> = runes(b).map(|(c, _)| c).collect();
    rs.iter().rev().collect::<String>().into_bytes()
}

/// Go's `unicode.ToLower`/`ToUpper` map one rune to one rune; Rust's full
/// case mapping may give several, which Go's simple mapping never does
/// (those runes stay as they are, bar `İ`, whose simple lower case is `i`).
fn to_lower(c: char) -> char {
    if c == '\u{130}' {
        return 'i';
    }
    single(c.to_lowercase()).unwrap_or(c)
}

fn to_upper(c: char) -> char {
    single(c.to_uppercase()).unwrap_or(c)
}

fn single(mut it: impl Iterator<Item = char>) -> Option<char> {
    let c = it.next()?;
    it.next().is_none().then_some(c)
}

fn map_all(s: &[u8], f: fn(char) -> char) -> Vec<u8> {
    runes(s).map(|(c, _)| f(c)).collect::<String>().into_bytes()
}

fn map_first(s: &[u8], f: fn(char) -> char) -> Vec<u8> {
    if s.is_empty() {
        return Vec::new();
    }
    let (c, w) = decode_rune(s);
    let mut out = f(c).to_string().into_bytes();
    out.extend_from_slice(&s[w..]);
    out
}

/// Go's `strings.Replace`: an empty pattern matches before every rune and
/// at the end. Refuses to build more than `cap` bytes.
fn go_replace(
    s: &[u8],
    pat: &[u8],
    with: &[u8],
    limit: Option<usize>,
    cap: usize,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut n = 0usize;
    let mut i = 0usize;
    let too_big = || format!("{BUDGET}: an expanded value passed {cap} bytes");
    while i <= s.len() && limit.is_none_or(|l| n < l) {
        let at = if pat.is_empty() {
            Some(i)
        } else {
            find(&s[i..], pat).map(|k| i + k)
        };
        let Some(at) = at else { break };
        if out.len() + (at - i) + with.len() > cap {
            return Err(too_big());
        }
        out.extend_from_slice(&s[i..at]);
        out.extend_from_slice(with);
        n += 1;
        if pat.is_empty() {
            if at == s.len() {
                i = s.len() + 1;
                break;
            }
            let (_, w) = decode_rune(&s[at..]);
            out.extend_from_slice(&s[at..at + w]);
            i = at + w;
        } else {
            i = at + pat.len();
        }
    }
    if i <= s.len() {
        if out.len() + (s.len() - i) > cap {
            return Err(too_big());
        }
        out.extend_from_slice(&s[i..]);
    }
    Ok(out)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Go's `strconv.Atoi`.
fn atoi(b: &[u8]) -> Option<i64> {
    std::str::from_utf8(b).ok()?.parse::<i64>().ok()
}

/// funcs.go `toSubstr`, byte for byte. A negative length (bash counts it
/// from the end) makes Go slice `s[pos:pos+length]` backwards, which
/// panics in the controller: reported as the error it is.
fn substr(s: &[u8], args: &[Vec<u8>]) -> Result<Vec<u8>, String> {
    let Some(Some(mut pos)) = args.first().map(|a| atoi(a)) else {
        return Ok(s.to_vec());
    };
    let len = s.len() as i64;
    if pos < 0 {
        pos = (len + pos).max(0);
    }
    let Some(length) = args.get(1) else {
        return Ok(if pos < len {
            s[pos as usize..].to_vec()
        } else {
            Vec::new()
        });
    };
    let Some(length) = atoi(length) else {
        return Ok(s.to_vec());
    };
    let end = pos.saturating_add(length);
    if end >= len {
        return Ok(if pos < len {
            s[pos as usize..].to_vec()
        } else {
            Vec::new()
        });
    }
    if end < pos {
        return Err(format!(
            "the substring length {length} is negative: Flux's envsubst slices \
             backwards and panics (funcs.go toSubstr)"
        ));
    }
    Ok(s[pos as usize..end as usize].to_vec())
}

// ---- Glob: fluxcd/pkg envsubst/path match.go ----

/// One element of a pattern. The fork's `Match` differs from Go's
/// `path.Match`: `*` and `?` also match `/`.
enum GlobTok {
    Star,
    /// One rune, decoded as Go decodes it.
    Any,
    /// One byte.
    Lit(u8),
    /// One rune in (or, negated, not in) the ranges.
    Class(bool, Vec<(char, char)>),
}

struct Glob(Vec<GlobTok>);

impl Glob {
    /// `None` for a pattern that Go's `matchChunk` reports as bad when it
    /// reaches the bad part: a match needs every element, so such a
    /// pattern never matches and the trim returns the value unchanged.
    fn parse(pattern: &[u8]) -> Option<Glob> {
        let mut toks = Vec::new();
        let mut i = 0;
        while i < pattern.len() {
            match pattern[i] {
                b'*' => {
                    // `scanChunk` folds a run of stars into one.
                    if !matches!(toks.last(), Some(GlobTok::Star)) {
                        toks.push(GlobTok::Star);
                    }
                    i += 1;
                }
                b'?' => {
                    toks.push(GlobTok::Any);
                    i += 1;
                }
                b'\\' => {
                    toks.push(GlobTok::Lit(*pattern.get(i + 1)?));
                    i += 2;
                }
                b'[' => {
                    i += 1;
                    let negated = pattern.get(i) == Some(&b'^');
                    if negated {
                        i += 1;
                    }
                    let mut ranges = Vec::new();
                    loop {
                        if pattern.get(i) == Some(&b']') && !ranges.is_empty() {
                            i += 1;
                            break;
                        }
                        let lo = class_char(pattern, &mut i)?;
                        let hi = if pattern.get(i) == Some(&b'-') {
                            i += 1;
                            class_char(pattern, &mut i)?
                        } else {
                            lo
                        };
                        ranges.push((lo, hi));
                    }
                    toks.push(GlobTok::Class(negated, ranges));
                }
                c => {
                    toks.push(GlobTok::Lit(c));
                    i += 1;
                }
            }
        }
        Some(Glob(toks))
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    /// `ends[e]`: the pattern matches `s[..e]`. One pass of dynamic
    /// programming over (element, byte offset): O(pattern x value), where
    /// trying every prefix would be quadratic in the value on top.
    fn matching_prefixes(&self, s: &[u8]) -> Vec<bool> {
        let n = s.len();
        let mut row = vec![false; n + 1];
        row[0] = true;
        for tok in &self.0 {
            let mut next = vec![false; n + 1];
            match tok {
                GlobTok::Star => {
                    let mut reached = false;
                    for i in 0..=n {
                        reached |= row[i];
                        next[i] = reached;
                    }
                }
                GlobTok::Lit(c) => {
                    for i in 0..n {
                        if row[i] && s[i] == *c {
                            next[i + 1] = true;
                        }
                    }
                }
                GlobTok::Any | GlobTok::Class(..) => {
                    for i in 0..n {
                        if !row[i] {
                            continue;
                        }
                        let (r, w) = decode_rune(&s[i..]);
                        let hit = match tok {
                            GlobTok::Class(negated, ranges) => {
                                ranges.iter().any(|(lo, hi)| *lo <= r && r <= *hi) != *negated
                            }
                            _ => true,
                        };
                        if hit {
                            next[i + w] = true;
                        }
                    }
                }
            }
            row = next;
        }
        row
    }
}

/// match.go `getEsc`: one (possibly escaped) rune of a class; `None` where
/// Go returns `ErrBadPattern`, including a class left open at the end.
fn class_char(pattern: &[u8], i: &mut usize) -> Option<char> {
    match pattern.get(*i)? {
        b'-' | b']' => return None,
        b'\\' => *i += 1,
        _ => {}
    }
    let (c, w) = decode_rune(pattern.get(*i..)?);
    if w == 0 || (c == char::REPLACEMENT_CHARACTER && w == 1) {
        return None;
    }
    *i += w;
    (*i < pattern.len()).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget() -> Budget {
        Budget {
            max_value_bytes: 1 << 20,
            growth_left: 1 << 24,
            steps_left: 10_000_000,
        }
    }

    /// `vars` holds known values; `?NAME` marks an unknown one.
    fn run(text: &str, vars: &[(&str, &str)]) -> Result<Expanded, String> {
        let lookup = |name: &str| match vars.iter().find(|(k, _)| k.trim_start_matches('?') == name)
        {
            Some((k, _)) if k.starts_with('?') => Lookup::Unknown,
            Some((_, v)) => Lookup::Value(v),
            None => Lookup::Undefined,
        };
        expand(text, &lookup, &mut budget())
    }

    fn expand_with(text: &str, vars: &[(&str, &str)]) -> Result<String, String> {
        run(text, vars).map(|e| e.text)
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

    /// Cases from fluxcd/pkg envsubst eval_test.go `TestExpand`, plus the
    /// ones where its forked `path.Match` departs from Go's.
    #[test]
    fn envsubst_functions_as_upstream_tests_them() {
        let v = [
            ("P", "path/to/file"),
            ("R", "/path/to/file"),
            ("F", "bash.string.txt"),
            ("S", "hello"),
            ("Z", "abcABC123ABCabc"),
            ("SL", "foo/bar/baz"),
            ("D", "foo.bar"),
            ("path_name", "/home/bozo/ideas/thoughts.for.today"),
        ];
        let cases = [
            ("${S:1:3}", "ell"),
            ("${S:-3}", "hello"),
            ("${path_name:11}", "ideas/thoughts.for.today"),
            ("${path_name:11:5}", "ideas"),
            ("${S/l/L}", "heLlo"),
            ("${S//l/L}", "heLLo"),
            ("${Z/%abc/XYZ}", "abcABC123ABCXYZ"),
            ("${Z/#abc/XYZ}", "XYZABC123ABCabc"),
            ("${Z//abc/xyz}", "xyzABC123ABCxyz"),
            ("${Z/abc/xyz}", "xyzABC123ABCabc"),
            ("${F#*.}", "string.txt"),
            ("${P#*/}", "to/file"),
            ("${R#*/}", "path/to/file"),
            ("${F##*.}", "txt"),
            // `*` crosses `/` in the fork (envsubst/path/match.go).
            ("${P##*/}", "file"),
            ("${R##*/}", "file"),
            ("${F%.*}", "bash.string"),
            ("${F%%.*}", "bash"),
            (r"${SL//\//-}", "foo-bar-baz"),
            (r"${SL/\//-}", "foo-bar/baz"),
            ("${D/./}", "foobar"),
            ("${S,}", "hello"),
            ("${S^}", "Hello"),
            ("${S#[a-h]?}", "llo"),
            ("${S#[^h]}", "hello"),
            // A malformed class never matches.
            ("${S#[}", "hello"),
            ("${S#h[e}", "hello"),
        ];
        for (input, want) in cases {
            assert_eq!(expand_with(input, &v).as_deref(), Ok(want), "{input}");
        }
    }

    #[test]
    fn envsubst_errors() {
        for bad in [
            "${A", "${A:-x", "${A-x}", "${}", "${A x}", "${-}", "${A##}", "${A//}",
        ] {
            assert!(expand_with(bad, &[("A", "a")]).is_err(), "{bad}");
        }
        // Go slices backwards and panics: not bash's `${A:1:-1}`.
        assert!(expand_with("${A:1:-1}", &[("A", "abc")]).is_err());
        assert!(expand_with("${A:0:-1}", &[("A", "abc")]).is_err());
        assert_eq!(expand_with("${A:5:-1}", &[("A", "abc")]).as_deref(), Ok(""));
        let deep = format!("{}x{}", "${A:=".repeat(10_000), "}".repeat(10_000));
        assert!(expand_with(&deep, &[]).unwrap_err().starts_with(BUDGET));
        let ok = format!("{}x{}", "${A:=".repeat(60), "}".repeat(60));
        assert_eq!(expand_with(&ok, &[]).as_deref(), Ok("x"));
        // A cut through a character cannot be parsed back by Flux.
        assert!(expand_with("${A:0:1}", &[("A", "é")]).is_err());
    }

    /// issue 12 item 8: every argument is evaluated, but a default that is
    /// not used contributes no undefined variable (it renders right); in
    /// strict mode Flux still fails on it.
    #[test]
    fn unused_defaults_leave_no_undefined_variable() {
        let e = run("${A:=${B}}", &[("A", "a")]).unwrap();
        assert_eq!(e.text, "a");
        assert!(e.undefined.is_empty(), "{e:?}");
        assert_eq!(e.strict_unset, ["B"]);
        assert_eq!(e.uses, ["A", "B"]);
        let e = run("${A:=${B}}", &[]).unwrap();
        assert_eq!(e.text, "");
        assert_eq!(e.undefined, ["B"]);
        let e = run("${A:=x}-${C}", &[]).unwrap();
        assert_eq!(e.undefined, ["C"]);
        assert_eq!(e.strict_unset, ["C"]);
    }

    /// issue 19 item 3: one rule for unknown values.
    #[test]
    fn unknown_values_stay_as_written_and_known_ones_expand() {
        let v = [
            ("?SECRET_DOMAIN", ""),
            ("TIMEZONE", "Europe/Berlin"),
            ("A", "a"),
        ];
        let cases = [
            ("${SECRET_DOMAIN/./-}", "${SECRET_DOMAIN/./-}"),
            ("${SECRET_DOMAIN:1}", "${SECRET_DOMAIN:1}"),
            ("${SECRET_DOMAIN:=x}", "${SECRET_DOMAIN:=x}"),
            ("${U:=${SECRET_DOMAIN}}", "${U:=${SECRET_DOMAIN}}"),
            ("${A:=${SECRET_DOMAIN}}", "a"),
            ("${A/a/${SECRET_DOMAIN}}", "${A/a/${SECRET_DOMAIN}}"),
            (
                "TZ ${TIMEZONE} on ${SECRET_DOMAIN}",
                "TZ Europe/Berlin on ${SECRET_DOMAIN}",
            ),
            ("$${A}-${SECRET_DOMAIN}", "${A}-${SECRET_DOMAIN}"),
            (r"${SECRET_DOMAIN/\//-}", r"${SECRET_DOMAIN/\//-}"),
        ];
        for (input, want) in cases {
            let e = run(input, &v).unwrap();
            assert_eq!(e.text, want, "{input}");
        }
        assert!(run("${SECRET_DOMAIN/./-}", &v).unwrap().unresolved);
        assert!(!run("${A:=${SECRET_DOMAIN}}", &v).unwrap().unresolved);
    }

    /// issue 14: nested replacements double per level; the value cap stops
    /// them before they are built.
    #[test]
    fn doubling_replacements_hit_the_value_cap() {
        let mut text = "a".to_string();
        for _ in 0..40 {
            text = format!("${{V//a/{text}{text}}}");
            if text.len() > 400 {
                break;
            }
        }
        let mut nested = "aa".to_string();
        for _ in 0..30 {
            nested = format!("${{V//a/{nested}}}");
        }
        let err = expand_with(&nested, &[("V", "aa")]).unwrap_err();
        assert!(err.starts_with(BUDGET), "{err}");
    }

    /// issue 14: `${V#**…*b}` used to take a minute; stars fold into one
    /// and the match is one pass per pattern element.
    #[test]
    fn glob_trims_are_linear_and_capped() {
        let value = "a".repeat(4000);
        let pattern = format!("{}b", "*".repeat(1000));
        let text = format!("${{V#{pattern}}}");
        assert_eq!(expand_with(&text, &[("V", &value)]).unwrap(), value);
        let hostile = format!("${{V#{}b}}", "*a".repeat(5000));
        let big = "a".repeat(100_000);
        let err = expand_with(&hostile, &[("V", &big)]).unwrap_err();
        assert!(err.starts_with(BUDGET), "{err}");
    }

    #[test]
    fn many_escapes_parse_in_linear_time() {
        let text = "$$".repeat(200_000);
        assert_eq!(expand_with(&text, &[]).unwrap(), "$".repeat(200_000));
    }
}
