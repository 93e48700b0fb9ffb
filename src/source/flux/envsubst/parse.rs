//! The parser of `${...}` expressions: a port of fluxcd/pkg
//! envsubst/parse, token by token, so that what Flux refuses is refused.

use super::BUDGET;

#[derive(Debug, PartialEq)]
pub(super) enum Ast {
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
pub(super) enum Token {
    Illegal,
    Eof,
    Ident,
    Lbrack,
    Rbrack,
}

pub(super) const SCAN_IDENT: u8 = 1;
pub(super) const SCAN_LBRACK: u8 = 2;
pub(super) const SCAN_RBRACK: u8 = 4;
pub(super) const SCAN_ESCAPE: u8 = 8;

pub(super) const ESC_DOLLAR: u8 = 1;
pub(super) const ESC_BACKSLASH: u8 = 2;
pub(super) const ESC_ALL: u8 = ESC_DOLLAR | ESC_BACKSLASH;

pub(super) type Accept = fn(char, usize) -> bool;

/// Works on chars where Go works on bytes; the accept functions only
/// test positions against ASCII operators, so the two agree.
pub(super) struct Parser {
    pub(super) buf: Vec<char>,
    /// Escape characters dropped from tokens. Go's `skip` cuts them out
    /// of the buffer (quadratic on a string of `$$$$…`); marking them
    /// keeps positions stable and the work linear.
    pub(super) dropped: Vec<bool>,
    pub(super) pos: usize,
    pub(super) start: usize,
    pub(super) width: usize,
    pub(super) mode: u8,
    pub(super) escape: u8,
    /// What a token may hold; `None` for any character (the text between
    /// expressions), which lets a run without `$` be passed over at once.
    pub(super) accept: Option<Accept>,
    pub(super) depth: usize,
}

/// Nested `${...}` beyond this is refused, so hostile input cannot
/// exhaust the stack.
pub(super) const MAX_NESTING: usize = 64;

pub(super) const BAD: &str = "bad substitution";

impl Parser {
    pub(super) fn new(text: &str) -> Parser {
        // Room for every byte: `chars` promises a quarter of them, and a
        // long text then grows its buffer again and again.
        let mut buf: Vec<char> = Vec::with_capacity(text.len());
        buf.extend(text.chars());
        Parser {
            dropped: vec![false; buf.len()],
            buf,
            pos: 0,
            start: 0,
            width: 0,
            mode: 0,
            escape: 0,
            accept: None,
            depth: 0,
        }
    }

    pub(super) fn read(&mut self) -> Option<char> {
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

    pub(super) fn unread(&mut self) {
        self.pos -= self.width;
    }

    pub(super) fn peek(&mut self) -> Option<char> {
        let r = self.read();
        self.unread();
        r
    }

    /// Drops the escape character just read; the escaped one becomes
    /// part of the token.
    pub(super) fn skip(&mut self) {
        self.dropped[self.pos - 1] = true;
        self.read();
    }

    pub(super) fn string(&self) -> String {
        let chars = &self.buf[self.start..self.pos];
        if !self.dropped[self.start..self.pos].contains(&true) && chars.iter().all(char::is_ascii) {
            // A byte each, copied as a block rather than pushed one by one.
            let bytes: Vec<u8> = chars.iter().map(|&c| c as u8).collect();
            return String::from_utf8(bytes).expect("ASCII is UTF-8");
        }
        let mut out = String::with_capacity(chars.len());
        out.extend(
            (self.start..self.pos)
                .filter(|&i| !self.dropped[i])
                .map(|i| self.buf[i]),
        );
        out
    }

    fn accepts(&self, r: char) -> bool {
        self.accept
            .is_none_or(|accept| accept(r, self.pos - self.start))
    }

    pub(super) fn scan(&mut self) -> Token {
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

    pub(super) fn scan_ident(&mut self, r: char) -> bool {
        if self.mode & SCAN_IDENT == 0 {
            return false;
        }
        if self.scan_escaped(r) {
            self.skip();
        } else if !self.accepts(r) {
            return false;
        }
        loop {
            if self.accept.is_none() {
                // Only a `$` (an expression, an escape) or a backslash (an
                // escape) can end the token or be left out of it: what
                // comes before the next one is taken whole, not a
                // character at a time (a dashboard's JSON is long).
                self.pos += self.buf[self.pos..]
                    .iter()
                    .position(|&c| c == '$' || c == '\\')
                    .unwrap_or(self.buf.len() - self.pos);
            }
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
            if !self.accepts(r) {
                self.unread();
                break;
            }
        }
        true
    }

    pub(super) fn scan_lbrack(&mut self, r: char) -> bool {
        if self.mode & SCAN_LBRACK == 0 || r != '$' {
            return false;
        }
        if self.read() == Some('{') {
            return true;
        }
        self.unread();
        false
    }

    pub(super) fn scan_rbrack(&self, r: char) -> bool {
        self.mode & SCAN_RBRACK != 0 && r == '}'
    }

    pub(super) fn scan_escaped(&mut self, r: char) -> bool {
        if self.mode & SCAN_ESCAPE == 0 {
            return false;
        }
        if r == '$' && self.escape & ESC_DOLLAR != 0 && self.peek() == Some('$') {
            return true;
        }
        r == '\\' && self.escape & ESC_BACKSLASH != 0 && matches!(self.peek(), Some('/' | '\\'))
    }

    pub(super) fn parse(&mut self) -> Result<Vec<Ast>, String> {
        let mut out = Vec::new();
        loop {
            self.accept = None;
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

    pub(super) fn parse_func(&mut self) -> Result<Ast, String> {
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

    pub(super) fn parse_func_inner(&mut self) -> Result<Ast, String> {
        self.escape = ESC_ALL;
        if self.peek() == Some('#') {
            return self.parse_len_func();
        }
        self.accept = Some(accept_ident);
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
        self.accept = Some(accept_ident);
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

    pub(super) fn parse_param(&mut self, accept: Accept, mode: u8) -> Result<Ast, String> {
        self.accept = Some(accept);
        self.mode = mode | SCAN_LBRACK;
        match self.scan() {
            Token::Lbrack => self.parse_func(),
            Token::Ident | Token::Rbrack => Ok(Ast::Text(self.string())),
            Token::Illegal | Token::Eof => {
                Err("unable to parse substitution within function".into())
            }
        }
    }

    pub(super) fn operator(&mut self, accept: Accept, err: &str) -> Result<String, String> {
        self.accept = Some(accept);
        self.mode = SCAN_IDENT;
        if self.scan() != Token::Ident {
            return Err(err.into());
        }
        Ok(self.string())
    }

    pub(super) fn parse_default_or_substr(&mut self, param: String) -> Result<Ast, String> {
        self.read();
        let r = self.peek();
        self.unread();
        match r {
            Some('=' | '-' | '?' | '+') => self.parse_default_func(param),
            _ => self.parse_substr_func(param),
        }
    }

    pub(super) fn parse_substr_func(&mut self, param: String) -> Result<Ast, String> {
        let name = self.operator(accept_one_colon, BAD)?;
        let mut args = vec![self.parse_param(reject_colon_close, SCAN_IDENT)?];
        self.accept = Some(accept_colon);
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

    pub(super) fn parse_remove_func(
        &mut self,
        param: String,
        accept: Accept,
    ) -> Result<Ast, String> {
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

    pub(super) fn parse_replace_func(&mut self, param: String) -> Result<Ast, String> {
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

    pub(super) fn parse_default_func(&mut self, param: String) -> Result<Ast, String> {
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
    pub(super) fn parse_operator_only(
        &mut self,
        param: String,
        accept: Accept,
    ) -> Result<Ast, String> {
        let name = self.operator(accept, BAD)?;
        self.consume_rbrack()?;
        Ok(Ast::Func {
            name,
            param,
            args: Vec::new(),
            at: (0, 0),
        })
    }

    pub(super) fn parse_len_func(&mut self) -> Result<Ast, String> {
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

    pub(super) fn consume_rbrack(&mut self) -> Result<(), String> {
        self.mode = SCAN_RBRACK;
        if self.scan() != Token::Rbrack {
            return Err(BAD.into());
        }
        Ok(())
    }
}

pub(super) fn accept_ident(r: char, _: usize) -> bool {
    r.is_alphanumeric() || r == '_'
}
pub(super) fn accept_colon(r: char, _: usize) -> bool {
    r == ':'
}
pub(super) fn accept_one_hash(r: char, i: usize) -> bool {
    r == '#' && i == 1
}
pub(super) fn accept_not_closing(r: char, _: usize) -> bool {
    r != '}'
}
pub(super) fn accept_hash(r: char, i: usize) -> bool {
    r == '#' && i < 3
}
pub(super) fn accept_percent(r: char, i: usize) -> bool {
    r == '%' && i < 3
}
pub(super) fn accept_default(r: char, i: usize) -> bool {
    (i == 1 && r == ':') || (i == 2 && matches!(r, '=' | '-' | '?' | '+'))
}
pub(super) fn accept_replace(r: char, i: usize) -> bool {
    (i == 1 && r == '/') || (i == 2 && matches!(r, '/' | '#' | '%'))
}
pub(super) fn accept_one_equal(r: char, i: usize) -> bool {
    i == 1 && r == '='
}
pub(super) fn accept_one_colon(r: char, i: usize) -> bool {
    i == 1 && r == ':'
}
pub(super) fn reject_colon_close(r: char, _: usize) -> bool {
    r != ':' && r != '}'
}
pub(super) fn accept_slash(r: char, _: usize) -> bool {
    r == '/'
}
pub(super) fn accept_not_slash(r: char, _: usize) -> bool {
    r != '/'
}
pub(super) fn accept_casing(r: char, i: usize) -> bool {
    (r == ',' || r == '^') && i < 3
}
