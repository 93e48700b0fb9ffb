//! Whether an edit would change more than the one value it is for. A
//! span of text can render into several places: a kustomize component or
//! base that several Flux Kustomizations build (one file, many objects),
//! or a YAML anchor that aliases expand (one node, many paths). Editing
//! such text changes every place, so the fix becomes display-only and
//! says where else the text renders.

use super::Edit;
use crate::model::{Model, ObjRef};
use crate::yaml::{Node, Span};

/// Why `edit`, meant for object `target`, would also change something
/// else; `None` when the text it touches renders once.
pub fn why_shared(model: &Model, target: ObjRef, edit: &Edit) -> Option<String> {
    let covers =
        |span: &Span| span.file == edit.file && span.start <= edit.start && edit.end <= span.end;
    let intended = model.object(target);
    // The innermost node of the target holding the edited text, and how
    // many places of the target show that same node.
    let mut innermost: Option<Span> = None;
    intended.root.walk(&mut |_, node| {
        if covers(&node.span())
            && innermost.is_none_or(|s| node.span().end - node.span().start < s.end - s.start)
        {
            innermost = Some(node.span());
        }
    });
    if let Some(span) = innermost {
        let places = count(&intended.root, span);
        if places > 1 {
            return Some(format!(
                "the edited text is a YAML anchor that renders at {places} places of {}; edit the place that should change instead",
                intended.id()
            ));
        }
    }
    // Other objects built from the same text (a shared component or base);
    // the target's own copies in other clusters' trees are the same object.
    // Only objects whose text is in the edited file can cover the edit: a
    // scan of every object per finding made large repos quadratic.
    let others: Vec<String> = model
        .with_text_in(edit.file)
        .map(|i| model.object(i))
        .filter(|o| o.kind() == intended.kind() && o.id() != intended.id())
        .filter(|o| covers(&o.root.span()))
        .map(|o| o.id())
        .collect();
    match others.as_slice() {
        [] => None,
        [one] => Some(format!(
            "the edited file also renders {one}, which the edit would change too"
        )),
        [first, rest @ ..] => Some(format!(
            "the edited file also renders {first} and {} more, which the edit would change too",
            rest.len()
        )),
    }
}

fn count(root: &Node, span: Span) -> usize {
    let mut n = 0;
    root.walk(&mut |_, node| {
        if node.span() == span {
            n += 1;
        }
    });
    n
}
