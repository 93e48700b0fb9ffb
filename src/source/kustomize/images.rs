//! kustomize's image transformer (`images:`), and the entries a Flux
//! Kustomization's `spec.images` writes into the kustomization it builds.

use crate::source::Issue;
use crate::source::files::Files;
use crate::source::object::StepKind;
use std::sync::Arc;

use crate::yaml::{Node, Span, Value};

use super::Res;
use super::budget::{record_step, spend_output, spend_work_on};
use super::fieldspecs::{FieldSpec, Leaf, split_path, visit};

/// One `images:` entry.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Image {
    pub name: String,
    pub new_name: String,
    pub new_tag: String,
    pub digest: String,
    /// Where it is written: the steps of the objects it changes point here.
    pub span: Span,
}

impl Image {
    pub fn of(entry: &Node) -> Image {
        let field = |k: &str| entry.get(k).and_then(Node::scalar_text).unwrap_or_default();
        Image {
            name: field("name"),
            new_name: field("newName"),
            new_tag: field("newTag"),
            digest: field("digest"),
            span: entry.span(),
        }
    }
}

/// A Flux Kustomization's `spec.images` written into the kustomization's
/// own list as kustomize-controller writes them (fluxcd/pkg kustomize
/// `Generator.WriteFile`): an entry of the same name is replaced in
/// place, any other is appended.
pub(super) fn flux_merge(own: &mut Vec<Image>, flux: &[Image]) {
    for image in flux {
        match own.iter_mut().find(|o| o.name == image.name) {
            Some(o) => *o = image.clone(),
            None => own.push(image.clone()),
        }
    }
}

/// kustomize's image.Split: name, tag and digest of an image reference.
fn split_image(image: &str) -> (String, String, String) {
    let slash = image.find('/').filter(|i| *i > 0).unwrap_or(0);
    let search = &image[slash..];
    let id = search.find('@').map(|i| i + slash);
    let ic = search.find(':').map(|i| i + slash);
    match (ic, id) {
        (None, None) => (image.to_string(), String::new(), String::new()),
        (None, Some(id)) => (
            image[..id].to_string(),
            String::new(),
            image[id + 1..].to_string(),
        ),
        (Some(ic), Some(id)) if id < ic => (
            image[..id].to_string(),
            String::new(),
            image[id + 1..].to_string(),
        ),
        (Some(ic), Some(id)) => (
            image[..ic].to_string(),
            image[ic + 1..id].to_string(),
            image[id + 1..].to_string(),
        ),
        (Some(ic), None) => (
            image[..ic].to_string(),
            image[ic + 1..].to_string(),
            String::new(),
        ),
    }
}

/// Rewrites the image references `image` selects in every object: in
/// the fields of `specs` and, as kustomize's legacy filter does, in every
/// container list.
pub(super) fn apply(
    files: &mut Files,
    res: &mut [Res],
    image: &Image,
    specs: &[FieldSpec],
) -> Result<(), Issue> {
    let Image {
        name,
        new_name,
        new_tag,
        digest,
        span,
    } = image;
    let span = *span;
    let Ok(pattern) = regex::Regex::new(&format!(
        "^{}(@sha256)?(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$",
        regex::escape(name)
    )) else {
        return Ok(());
    };
    let added = new_name.len() + new_tag.len() + digest.len();
    let updated = std::cell::Cell::new(0usize);
    let update = |node: &mut Node| {
        let Some(value) = node.as_str() else { return };
        if !pattern.is_match(value) {
            return;
        }
        updated.set(updated.get() + 1);
        let (mut n, mut tag, mut dig) = split_image(value);
        if !new_name.is_empty() {
            n = new_name.clone();
        }
        if !new_tag.is_empty() && !digest.is_empty() {
            tag = new_tag.clone();
            dig = digest.clone();
        } else if !new_tag.is_empty() {
            tag = new_tag.clone();
            dig.clear();
        } else if !digest.is_empty() {
            tag.clear();
            dig = digest.clone();
        }
        if !tag.is_empty() {
            n = format!("{n}:{tag}");
        }
        if !dig.is_empty() {
            n = format!("{n}@{dig}");
        }
        *node = Node::synthetic_str(n, span);
    };
    for r in res.iter_mut() {
        // The object is copied and walked whole.
        spend_work_on(files, &r.obj.root, 0)
            .map_err(|m| Issue::at(&files.sources, span, format!("images: {}: {m}", r.obj.id())))?;
        let before = r.obj.root.clone();
        legacy_images(r.obj.root_mut(), &update);
        let gvk = r.gvk();
        for fs in specs.iter().filter(|fs| fs.selects(&gvk)) {
            let _ = visit(
                r.obj.root_mut(),
                &split_path(&fs.path),
                false,
                Leaf::Scalar,
                span,
                &mut |node| {
                    update(node);
                    Ok(())
                },
            );
        }
        spend_output(files, added.saturating_mul(updated.take()))
            .map_err(|m| Issue::at(&files.sources, span, format!("images: {}: {m}", r.obj.id())))?;
        if r.obj.root != before {
            let step = format!("images: {name}");
            record_step(files, &mut r.obj, StepKind::Transformer, step, span).map_err(|m| {
                Issue::at(&files.sources, span, format!("images: {}: {m}", r.obj.id()))
            })?;
        }
    }
    Ok(())
}

/// kustomize's legacy image filter: `image` of every element of any
/// `containers` or `initContainers` list, wherever it is in the object.
fn legacy_images(node: &mut Node, update: &dyn Fn(&mut Node)) {
    match &mut node.value {
        Value::Map(entries) => {
            for (k, v) in Arc::make_mut(entries).iter_mut() {
                let is_containers = matches!(k.as_str(), Some("containers" | "initContainers"));
                if is_containers {
                    for item in v.as_seq_mut().into_iter().flatten() {
                        if let Some(image) = item.get_mut("image") {
                            update(image);
                        }
                    }
                }
                legacy_images(v, update);
            }
        }
        Value::Seq(items) => {
            for item in Arc::make_mut(items).iter_mut() {
                legacy_images(item, update);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_image_references() {
        let s = |i: &str| {
            let (a, b, c) = split_image(i);
            (a, b, c)
        };
        assert_eq!(s("nginx"), ("nginx".into(), "".into(), "".into()));
        assert_eq!(s("nginx:1.2"), ("nginx".into(), "1.2".into(), "".into()));
        assert_eq!(
            s("reg:5000/app:v1@sha256:abc"),
            ("reg:5000/app".into(), "v1".into(), "sha256:abc".into())
        );
        assert_eq!(
            s("app@sha256:abc"),
            ("app".into(), "".into(), "sha256:abc".into())
        );
    }

    #[test]
    fn flux_images_replace_the_entry_of_their_name_or_are_appended() {
        let image = |name: &str, tag: &str| Image {
            name: name.into(),
            new_tag: tag.into(),
            ..Image::default()
        };
        let mut own = vec![image("a", "1"), image("b", "1")];
        flux_merge(&mut own, &[image("b", "2"), image("c", "3")]);
        assert_eq!(own, vec![image("a", "1"), image("b", "2"), image("c", "3")]);
    }
}
