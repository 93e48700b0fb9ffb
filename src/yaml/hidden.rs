//! Secret values that leave the tree they were read into. A value Flux
//! substitutes from a Secret is marked where it lands ([`super::Origin`]),
//! and reports show that node by its length; but a name or namespace
//! made from it is copied into identities, messages, step details, the
//! names of the objects derived from it and every format's fields, where
//! no mark follows. So each such value is registered here when it is read
//! from its Secret, and every text the reports print passes through
//! [`mask`] (`report::control`), which writes the variable and the Secret
//! it came from in its place.
//!
//! The registry is the process's: the Flux builds that read the values
//! run on several threads, and what one run registers stays hidden in the
//! next (the language server's), which hides more, never less.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

use aho_corasick::{AhoCorasick, MatchKind};

/// Shorter values are not hidden: three characters are found inside
/// many texts, and would garble the paths, words, numbers and
/// fingerprints that hold them.
const MIN_LEN: usize = 4;

#[derive(Default)]
struct Hidden {
    /// `(value, what is printed instead)`.
    values: Vec<(String, String)>,
    /// The values, to register each once.
    known: BTreeSet<String>,
    /// Over `values`, built at the first print after a change: one pass
    /// over a text finds every value, however many a repository defines.
    finder: Option<AhoCorasick>,
}

static HIDDEN: RwLock<Hidden> = RwLock::new(Hidden {
    values: Vec::new(),
    known: BTreeSet::new(),
    finder: None,
});
/// Whether [`HIDDEN`] holds anything: most runs read no Secret's value,
/// and every printed field asks.
static ANY: AtomicBool = AtomicBool::new(false);

/// Registers `value`, read from key `variable` of Secret `secret`
/// (`namespace/name`), to be printed as `<variable from Secret secret>`.
pub fn hide(value: &str, variable: &str, secret: &str) {
    if value.len() < MIN_LEN {
        return;
    }
    let mut hidden = HIDDEN.write().unwrap_or_else(|e| e.into_inner());
    if !hidden.known.insert(value.to_string()) {
        return;
    }
    // Written into JSON after its escapes, so only characters that need
    // none (a Kubernetes name's and a variable's, which are all a valid
    // one holds).
    let plain = |s: &str| -> String {
        s.chars()
            .map(|c| match c {
                'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '.' | '_' | '/' => c,
                _ => '?',
            })
            .collect()
    };
    hidden.values.push((
        value.to_string(),
        format!("<{} from Secret {}>", plain(variable), plain(secret)),
    ));
    hidden.finder = None;
    ANY.store(true, Ordering::Release);
}

/// Whether any value is registered: a report written whole can skip
/// the search.
pub fn any() -> bool {
    ANY.load(Ordering::Acquire)
}

/// `text` with every registered value replaced by its placeholder, the
/// longest where two start at one place, in one pass (a placeholder is
/// not searched again); borrowed when none is in it.
pub fn mask(text: &str) -> Cow<'_, str> {
    if !any() {
        return Cow::Borrowed(text);
    }
    let mut hidden = HIDDEN.read().unwrap_or_else(|e| e.into_inner());
    if hidden.finder.is_none() {
        drop(hidden);
        let mut write = HIDDEN.write().unwrap_or_else(|e| e.into_inner());
        if write.finder.is_none() {
            write.finder = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(write.values.iter().map(|(v, _)| v))
                .ok();
        }
        drop(write);
        hidden = HIDDEN.read().unwrap_or_else(|e| e.into_inner());
    }
    let Some(finder) = &hidden.finder else {
        // Too many values for an automaton: nothing can be told apart,
        // so nothing of the text is shown.
        return Cow::Owned(format!("<{} bytes hidden: Secret values>", text.len()));
    };
    let mut matches = finder.find_iter(text).peekable();
    if matches.peek().is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for m in matches {
        out.push_str(&text[from..m.start()]);
        out.push_str(&hidden.values[m.pattern().as_usize()].1);
        from = m.end();
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_value_is_shown_as_its_variable_and_secret() {
        hide("q7-hidden", "SHORT", "flux-system/vars");
        hide("q7-hidden-name", "NAME", "flux-system/vars");
        hide("abc", "TOO_SHORT", "flux-system/vars");
        assert_eq!(
            mask("ConfigMap/q7-hidden-name and app-q7-hidden, abc"),
            "ConfigMap/<NAME from Secret flux-system/vars> and \
             app-<SHORT from Secret flux-system/vars>, abc"
        );
        assert!(matches!(mask("nothing here"), Cow::Borrowed(_)));
        // A Secret's name is repository text: nothing of it needs an
        // escape where the placeholder is written.
        hide("q7-quoted", "Q", "ns/a\"b\\\n::c");
        assert_eq!(mask("q7-quoted"), "<Q from Secret ns/a?b????c>");
    }
}
