//! Builds [`Node`] trees from YAML events: the block scanner's
//! ([`super::block`]) as it reads, or saphyr's.
//!
//! We build our own tree instead of using `saphyr::MarkedYaml` because we
//! need byte offsets (saphyr counts characters), the scalar style (for Flux
//! re-typing), merge keys, and hard budgets that hold on hostile input: the
//! builder is iterative, so nesting depth costs heap, not stack, and is
//! capped on the tree as expanded; alias expansion is charged in nodes and
//! bytes, for keys as for values; mapping keys are indexed, so building a
//! mapping and applying its merge keys is linear in its size.
//!
//! saphyr follows the YAML spec; Flux and kustomize read YAML with go-yaml
//! v3, which accepts some text the spec refuses and changes some values on
//! the way through kustomize. [`super::compat`] makes up the difference.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use saphyr_parser::{Event, Parser, ScalarStyle, Tag};

use super::block;
use super::compat;
use super::limits::Limits;
use super::node::{CompactString, FileId, Node, Span, Style, Value};
use super::position::{Lines, OffsetMap};

/// A YAML syntax error or a broken budget, at a position in the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct YamlError {
    pub message: String,
    /// 1-based line and character column; 0 when the whole file is meant.
    pub line: u32,
    pub col: u32,
    pub offset: u32,
}

/// How folded (`>`) scalars are read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Folded {
    /// As kustomize hands them on (see [`compat::refold`]): every manifest
    /// Flux applies goes through a kustomize build.
    AsKustomizeWrites,
    /// As written, for text read by other Go tools (Helm values).
    AsWritten,
}

/// Parses every document of a repository manifest (or any file Flux hands
/// to kustomize). Empty documents (a file that is only `---`, or comments)
/// are left out.
pub fn parse_documents(text: &str, file: FileId, limits: &Limits) -> Result<Vec<Node>, YamlError> {
    parse_with(text, file, limits, Folded::AsKustomizeWrites)
}

/// Parses a Helm values document held in a ConfigMap or Secret key:
/// helm-controller reads it directly, not through kustomize.
pub fn parse_values(text: &str, file: FileId, limits: &Limits) -> Result<Vec<Node>, YamlError> {
    parse_with(text, file, limits, Folded::AsWritten)
}

fn parse_with(
    text: &str,
    file: FileId,
    limits: &Limits,
    folded: Folded,
) -> Result<Vec<Node>, YamlError> {
    let lines = Lines::new(text);
    if text.len() > limits.max_bytes {
        return Err(YamlError {
            message: format!(
                "file is {} bytes, over the limit of {} bytes",
                text.len(),
                limits.max_bytes
            ),
            line: 0,
            col: 0,
            offset: 0,
        });
    }
    let mut repaired = compat::Repaired::default();
    // The block-style subset nearly every file is in, read by our own
    // scanner; anything else, and every error, is saphyr's.
    if let Some(Ok(docs)) = Builder::new(&lines, file, limits, folded, &repaired).scan(text) {
        return Ok(docs);
    }
    let mut first_error = None;
    let mut last_error = None;
    for _ in 0..=limits.max_repairs {
        let working = repaired.text.as_deref().unwrap_or(text);
        let stop = match Builder::new(&lines, file, limits, folded, &repaired).run(working) {
            Ok(docs) => return Ok(docs),
            Err(stop) => stop,
        };
        let error = lines.error(repaired.original(stop.offset), stop.message.clone());
        let repair = if stop.repairable {
            repaired.repair(text, stop.offset, &stop.message, stop.flow_start)
        } else {
            compat::Repair::Refused
        };
        match repair {
            // The error shown is the first one a tentative repair was made
            // for: one that leads to another error has not made the file
            // one go-yaml reads.
            compat::Repair::Refused => return Err(first_error.unwrap_or(error)),
            compat::Repair::Tentative => {
                first_error.get_or_insert(error);
            }
            // The error was saphyr's alone; what follows is go-yaml's too.
            compat::Repair::AsGoYaml => last_error = Some(error),
        }
    }
    Err(first_error.unwrap_or_else(|| {
        let last = last_error.expect("the loop runs at least once");
        YamlError {
            message: format!(
                "more than {} places where go-yaml reads the text otherwise than the YAML \
                 spec (the limit of repairs per file); this is one more",
                limits.max_repairs
            ),
            ..last
        }
    }))
}

/// Why the builder stopped: an error at a byte offset of the text parsed,
/// with what a repair needs to know.
struct Stop {
    offset: u32,
    message: String,
    /// A syntax error from saphyr (budgets are never repaired).
    repairable: bool,
    /// Start of the outermost flow collection open at the error.
    flow_start: Option<u32>,
}

/// Size of a subtree, charged when an anchor or alias copies it.
#[derive(Clone, Copy, Default)]
struct Cost {
    nodes: usize,
    bytes: usize,
    /// Collections nested in one another (a scalar is 0).
    height: usize,
}

impl Cost {
    fn add(&mut self, child: Cost) {
        self.nodes += child.nodes;
        self.bytes += child.bytes;
        self.height = self.height.max(child.height);
    }

    fn closed(self) -> Cost {
        Cost {
            nodes: self.nodes + 1,
            bytes: self.bytes,
            height: self.height + 1,
        }
    }
}

/// A scalar mapping key in a form that can be hashed.
#[derive(PartialEq, Eq, Hash)]
enum KeyId {
    Null,
    Bool(bool),
    Int(i64),
    Float(u64),
    Str(CompactString),
}

impl KeyId {
    fn of(node: &Node) -> Option<KeyId> {
        Some(match &node.value {
            Value::Null => KeyId::Null,
            Value::Bool(b) => KeyId::Bool(*b),
            Value::Int(i) => KeyId::Int(*i),
            Value::Float(f) => KeyId::Float(f.to_bits()),
            Value::Str(s) => KeyId::Str(s.clone()),
            Value::Seq(_) | Value::Map(_) => return None,
        })
    }
}

/// Whether two scalar keys are one: the equality of [`KeyId::of`]'s
/// values, without making them (a copy of each key's text).
fn same_key(a: &Node, b: &Node) -> bool {
    match (&a.value, &b.value) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Str(x), Value::Str(y)) => x == y,
        _ => false,
    }
}

/// A string key's bit of 64, from its length and last byte (two keys with
/// different bits differ); none for other keys, which are compared with
/// every key before them. Inlined into its one caller, once per key
/// (with `#[inline]` alone the compiler kept the call).
#[inline(always)]
fn key_bit(key: &Node) -> u64 {
    match &key.value {
        Value::Str(s) => {
            let last = s.as_bytes().last().copied().unwrap_or(0);
            1 << ((s.len() * 7 + usize::from(last)) % 64)
        }
        _ => 0,
    }
}

/// Mappings up to this many entries find a duplicate key by looking at
/// each (nearly every mapping in a manifest); larger ones build a hash
/// index, so that a mapping stays linear in its size.
const INDEX_FROM: usize = 16;

/// The children of every collection open on the builder's stack, the
/// innermost one's last. A collection takes its children when it closes,
/// in a vector of exactly their number: trees live for the whole run, and
/// growing each vector by doubling (then shrinking it) left the blocks of
/// every size it went through behind in the allocator.
struct Scratch {
    items: Vec<Node>,
    entries: Vec<(Node, Node)>,
}

/// An open collection; its children so far are in [`Scratch`] from `from`.
enum Content {
    Seq {
        from: usize,
    },
    Map {
        from: usize,
        /// Positions of the keys (counted from `from`), once the mapping
        /// has [`INDEX_FROM`] entries. Boxed, though the map is on the
        /// heap already: few mappings have one, and a frame 40 bytes
        /// smaller made the tree builder 0.3 M instructions cheaper on
        /// joryirving (its frames are pushed and matched per event).
        #[allow(clippy::box_collection)]
        index: Option<Box<HashMap<KeyId, usize>>>,
        /// A bit for each string key so far ([`key_bit`]), before there
        /// is an index: a key whose bit is clear is new, without a look
        /// at each key before it.
        strings: u64,
        /// Maps merged in with `<<`, applied when the mapping closes so
        /// that explicit keys win wherever they are written.
        merges: Vec<Node>,
        key: Option<Node>,
    },
}

struct Frame {
    content: Content,
    start: u32,
    /// Where the collection starts in the file as written, asked when it
    /// starts: positions are then asked in the text's order, each near
    /// the last, where its end looking back to its start searched all of
    /// the file's lines.
    at: Span,
    anchor: usize,
    cost: Cost,
    flow: bool,
}

struct Builder<'a> {
    lines: &'a Lines<'a>,
    file: FileId,
    limits: &'a Limits,
    folded: Folded,
    repaired: &'a compat::Repaired,
}

/// What is left of the per-file alias budgets.
struct Budget {
    nodes: usize,
    bytes: usize,
}

impl<'a> Builder<'a> {
    fn new(
        lines: &'a Lines<'a>,
        file: FileId,
        limits: &'a Limits,
        folded: Folded,
        repaired: &'a compat::Repaired,
    ) -> Self {
        Builder {
            lines,
            file,
            limits,
            folded,
            repaired,
        }
    }

    /// The span of bytes `start..end` of the text parsed, in the file as
    /// written.
    fn span(&self, start: u32, end: u32) -> Span {
        let original = |at| self.repaired.original(at);
        self.lines.span(self.file, original(start), original(end))
    }

    /// The span from where `from` starts to byte `end` of the text parsed.
    fn until(&self, from: Span, end: u32) -> Span {
        Span {
            end: self.repaired.original(end).max(from.start),
            ..from
        }
    }

    fn stop(&self, offset: u32, message: String) -> Stop {
        Stop {
            offset,
            message,
            repairable: false,
            flow_start: None,
        }
    }

    /// The trees of `text` as the block scanner reads it; `None` when
    /// the text is not all in its subset.
    fn scan(&self, text: &str) -> Option<Result<Vec<Node>, Stop>> {
        let mut tree = Tree::new(self, text);
        block::scan(text, self.lines, &mut tree)?;
        Some(match tree.stop {
            Some(stop) => Err(stop),
            None => Ok(tree.finish()),
        })
    }

    /// The trees of `text` as saphyr reads it.
    fn run(&self, text: &str) -> Result<Vec<Node>, Stop> {
        let offsets = OffsetMap::new(text);
        let mut parser = Parser::new_from_str(text);
        let mut tree = Tree::new(self, text);
        while let Some(event) = parser.next_event() {
            let (event, span) = event.map_err(|e| Stop {
                offset: offsets.byte(e.marker().index()),
                message: e.info().to_string(),
                repairable: true,
                flow_start: tree.stack.iter().find(|f| f.flow).map(|f| f.start),
            })?;
            let start = offsets.byte(span.start.index());
            let end = offsets.byte(span.end.index());
            match event {
                Event::StreamStart | Event::Nothing | Event::StreamEnd => {}
                Event::DocumentStart(_) => tree.start_document(),
                Event::DocumentEnd => tree.end_document(),
                Event::Alias(id) => tree.take_alias(id, start)?,
                Event::Scalar(value, style, anchor, tag) => {
                    let end = quoted_end(text, style, start, end);
                    tree.take_scalar(&value, style, anchor, tag.as_deref(), start, end)?;
                }
                Event::SequenceStart(anchor, _) => tree.take_open(true, anchor, start)?,
                Event::MappingStart(anchor, _) => tree.take_open(false, anchor, start)?,
                Event::SequenceEnd | Event::MappingEnd => tree.take_close(start, end)?,
            }
        }
        Ok(tree.finish())
    }

    fn charge(&self, budget: &mut Budget, cost: Cost, at: u32) -> Result<(), Stop> {
        if cost.nodes > budget.nodes {
            return Err(self.stop(
                at,
                format!(
                    "alias expansion exceeds the budget of {} nodes (alias bomb?)",
                    self.limits.max_alias_nodes
                ),
            ));
        }
        if cost.bytes > budget.bytes {
            return Err(self.stop(
                at,
                format!(
                    "alias expansion exceeds the budget of {} bytes of text (alias bomb?)",
                    self.limits.max_alias_bytes
                ),
            ));
        }
        budget.nodes -= cost.nodes;
        budget.bytes -= cost.bytes;
        Ok(())
    }
}

/// Trees being built from events, one event at a time.
struct Tree<'b, 't> {
    builder: &'b Builder<'b>,
    text: &'t str,
    docs: Vec<Node>,
    stack: Vec<Frame>,
    scratch: Scratch,
    anchors: HashMap<usize, (Node, Cost)>,
    budget: Budget,
    root: Option<Node>,
    /// Why the events from the block scanner were refused (a budget):
    /// later ones are not looked at, and the text goes to saphyr.
    stop: Option<Stop>,
}

impl block::Sink for Tree<'_, '_> {
    fn scalar(
        &mut self,
        text: &str,
        style: ScalarStyle,
        anchor: usize,
        tag: Option<&Tag>,
        start: u32,
        end: u32,
    ) {
        if self.stop.is_none() {
            let taken = self.take_scalar(text, style, anchor, tag, start, end);
            self.refuse(taken);
        }
    }

    fn open(&mut self, seq: bool, anchor: usize, start: u32) {
        if self.stop.is_none() {
            let taken = self.take_open(seq, anchor, start);
            self.refuse(taken);
        }
    }

    fn close(&mut self, start: u32, end: u32) {
        if self.stop.is_none() {
            let taken = self.take_close(start, end);
            self.refuse(taken);
        }
    }

    fn alias(&mut self, id: usize, start: u32) {
        if self.stop.is_none() {
            let taken = self.take_alias(id, start);
            self.refuse(taken);
        }
    }

    fn document_start(&mut self) {
        self.start_document();
    }

    fn document_end(&mut self) {
        self.end_document();
    }
}

impl<'b, 't> Tree<'b, 't> {
    fn new(builder: &'b Builder<'b>, text: &'t str) -> Self {
        Tree {
            builder,
            text,
            docs: Vec::new(),
            // Room for the nesting and the open collections' children of
            // a usual manifest, not grown by doubling in every file.
            stack: Vec::with_capacity(16),
            scratch: Scratch {
                items: Vec::with_capacity(16),
                entries: Vec::with_capacity(32),
            },
            anchors: HashMap::new(),
            budget: Budget {
                nodes: builder.limits.max_alias_nodes,
                bytes: builder.limits.max_alias_bytes,
            },
            root: None,
            stop: None,
        }
    }

    /// Keeps why the scanner's events were refused: later ones are not
    /// looked at.
    fn refuse(&mut self, taken: Result<(), Stop>) {
        if let Err(stop) = taken {
            self.stop = Some(stop);
        }
    }

    fn start_document(&mut self) {
        self.anchors.clear();
    }

    fn end_document(&mut self) {
        if let Some(r) = self.root.take()
            && !r.is_null()
        {
            self.docs.push(r);
        }
    }

    /// Adds the scalar written at bytes `start..end` of the text.
    /// Inlined into the block scanner's [`block::Sink::scalar`], as is
    /// [`Tree::add`]: the node is made where it is put.
    #[inline(always)]
    fn take_scalar(
        &mut self,
        text: &str,
        style: ScalarStyle,
        anchor: usize,
        tag: Option<&Tag>,
        start: u32,
        end: u32,
    ) -> Result<(), Stop> {
        let span = self.builder.span(start, end);
        let mut node = scalar(text, style, tag, self.builder.folded, span);
        let repaired = self.builder.repaired;
        if let Some(decoded) = repaired.quoted.get(&repaired.original(start)) {
            node.value = Value::Str(decoded.as_str().into());
        }
        let cost = Cost {
            nodes: 1,
            bytes: text.len(),
            height: 0,
        };
        self.add(node, cost, anchor, start)
    }

    fn take_alias(&mut self, id: usize, start: u32) -> Result<(), Stop> {
        let Some((node, cost)) = self.anchors.get(&id) else {
            return Err(self
                .builder
                .stop(start, "alias refers to an unknown anchor".into()));
        };
        if self.stack.len() + cost.height > self.builder.limits.max_depth {
            return Err(self.builder.stop(
                start,
                format!(
                    "nesting deeper than {} levels once this alias is expanded",
                    self.builder.limits.max_depth
                ),
            ));
        }
        let (node, cost) = (node.clone(), *cost);
        self.builder.charge(&mut self.budget, cost, start)?;
        self.add(node, cost, 0, start)
    }

    /// Opens a sequence (`seq`) or mapping starting at byte `start`.
    fn take_open(&mut self, seq: bool, anchor: usize, start: u32) -> Result<(), Stop> {
        if self.stack.len() >= self.builder.limits.max_depth {
            return Err(self.builder.stop(
                start,
                format!(
                    "nesting deeper than {} levels",
                    self.builder.limits.max_depth
                ),
            ));
        }
        let content = if seq {
            Content::Seq {
                from: self.scratch.items.len(),
            }
        } else {
            Content::Map {
                from: self.scratch.entries.len(),
                index: None,
                strings: 0,
                merges: Vec::new(),
                key: None,
            }
        };
        let flow = matches!(self.text.as_bytes().get(start as usize), Some(b'[' | b'{'));
        self.stack.push(Frame {
            content,
            start,
            at: self.builder.span(start, start),
            anchor,
            cost: Cost::default(),
            flow,
        });
        Ok(())
    }

    /// Closes the innermost collection, whose end is at `start..end`.
    fn take_close(&mut self, start: u32, end: u32) -> Result<(), Stop> {
        let Some(frame) = self.stack.pop() else {
            return Err(self.builder.stop(start, "unbalanced collection end".into()));
        };
        let value = match frame.content {
            Content::Seq { from } => {
                // One copy of the items, into a vector of their number.
                Value::Seq(Arc::new(self.scratch.items.split_off(from)))
            }
            Content::Map { from, merges, .. } => {
                apply_merges(&mut self.scratch.entries, from, merges);
                Value::Map(take_tail(&mut self.scratch.entries, from))
            }
        };
        let span = self.builder.until(frame.at, end);
        let node = Node::new(value, span);
        self.add(node, frame.cost.closed(), frame.anchor, start)
    }

    /// Puts a node made at byte `start` (anchored as `anchor`, 0 for
    /// none) into the collection open, or makes it the document's root.
    #[inline(always)]
    fn add(&mut self, node: Node, cost: Cost, anchor: usize, start: u32) -> Result<(), Stop> {
        if anchor != 0 {
            // The copy kept for later aliases costs what an alias does.
            self.builder.charge(&mut self.budget, cost, start)?;
            self.anchors.insert(anchor, (node.clone(), cost));
        }
        let Some(frame) = self.stack.last_mut() else {
            self.root = Some(node);
            return Ok(());
        };
        frame.cost.add(cost);
        match &mut frame.content {
            Content::Seq { .. } => self.scratch.items.push(node),
            Content::Map {
                from,
                index,
                strings,
                merges,
                key,
            } => match key.take() {
                None => {
                    if matches!(node.value, Value::Seq(_) | Value::Map(_)) {
                        // sigs.k8s.io/yaml (kubectl, Flux) refuses
                        // such keys when it converts to JSON.
                        return Err(self.builder.stop(
                            self.builder.repaired.working(node.span().start),
                            "a mapping or sequence used as a mapping key; Kubernetes \
                             manifests take only scalar keys"
                                .into(),
                        ));
                    }
                    *key = Some(node);
                }
                Some(k) if k.style() == Style::Plain && k.as_str() == Some("<<") => {
                    match node.value {
                        Value::Seq(items) => merges.extend(Arc::unwrap_or_clone(items)),
                        _ => merges.push(node),
                    }
                }
                Some(k) => {
                    let own = &mut self.scratch.entries[*from..];
                    let at = own.len();
                    let found = match index {
                        Some(index) => {
                            let id = KeyId::of(&k).expect("collection keys are refused above");
                            match index.entry(id) {
                                Entry::Occupied(e) => Some(*e.get()),
                                Entry::Vacant(e) => {
                                    e.insert(at);
                                    None
                                }
                            }
                        }
                        None => {
                            let bit = key_bit(&k);
                            let new = *strings & bit == 0 && bit != 0;
                            *strings |= bit;
                            match new {
                                true => None,
                                false => own.iter().position(|(other, _)| same_key(&k, other)),
                            }
                        }
                    };
                    // Later duplicates win, as in go-yaml's decoding into maps.
                    match found {
                        Some(i) => own[i] = (k, node),
                        None => {
                            self.scratch.entries.push((k, node));
                            if index.is_none() && at + 1 == INDEX_FROM {
                                let keys = self.scratch.entries[*from..].iter();
                                let ids = keys.map(|(k, _)| KeyId::of(k)).enumerate();
                                let ids = ids.filter_map(|(i, id)| Some((id?, i)));
                                *index = Some(Box::new(ids.collect()));
                            }
                        }
                    }
                }
            },
        }
        Ok(())
    }

    /// The documents read, after the last event.
    fn finish(mut self) -> Vec<Node> {
        if let Some(r) = self.root.take()
            && !r.is_null()
        {
            self.docs.push(r);
        }
        self.docs
    }
}

/// The items of `items` from `from` on, moved into a shared slice by one
/// copy: collecting them from a drain moved them one at a time, and
/// building the mappings' slices that way cost 4.2 M instructions on
/// joryirving.
fn take_tail<T>(items: &mut Vec<T>, from: usize) -> Arc<[T]> {
    let len = items.len() - from;
    let mut shared = Arc::<[T]>::new_uninit_slice(len);
    let slots = Arc::get_mut(&mut shared).expect("a new Arc has no other handle");
    // SAFETY: `from..from + len` are initialised items of `items`, copied
    // into the `len` slots of a new allocation they cannot overlap;
    // shortening `items` to `from` then hands their ownership to the
    // slice (they are neither dropped nor read through `items` again),
    // whose every slot is then initialised.
    unsafe {
        std::ptr::copy_nonoverlapping(items.as_ptr().add(from), slots.as_mut_ptr().cast(), len);
        items.set_len(from);
        shared.assume_init()
    }
}

/// Adds the entries of merged maps whose keys the mapping does not have;
/// of several merged maps the first to name a key wins (YAML merge key
/// spec, as go-yaml applies it).
/// The mapping's entries are those of `entries` from `from`.
fn apply_merges(entries: &mut Vec<(Node, Node)>, from: usize, merges: Vec<Node>) {
    if merges.is_empty() {
        return;
    }
    let mut seen: HashSet<KeyId> = entries[from..]
        .iter()
        .filter_map(|(k, _)| KeyId::of(k))
        .collect();
    for merged in merges {
        let Value::Map(mut extra) = merged.value else {
            continue;
        };
        for (k, v) in super::node::take_entries(&mut extra) {
            if let Some(id) = KeyId::of(&k)
                && seen.insert(id)
            {
                entries.push((k, v));
            }
        }
    }
}

/// Where a quoted scalar written at `start..end` ends: after its closing
/// quote. saphyr's event runs on over the spaces and comment that
/// follow it (`"on" # default`), which a label or an editor's range
/// would then underline too.
fn quoted_end(text: &str, style: ScalarStyle, start: u32, end: u32) -> u32 {
    let quote = match style {
        ScalarStyle::SingleQuoted => b'\'',
        ScalarStyle::DoubleQuoted => b'"',
        _ => return end,
    };
    let Some(bytes) = text.as_bytes().get(start as usize..end as usize) else {
        return end;
    };
    // An anchor or a tag may come first (`&a "x"`, `!!str 'y'`), each
    // ended by a space or a line break.
    let mut i = 0;
    while matches!(bytes.get(i), Some(b'&' | b'!')) {
        while bytes.get(i).is_some_and(|b| !b.is_ascii_whitespace()) {
            i += 1;
        }
        while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
    }
    if bytes.get(i) != Some(&quote) {
        return end;
    }
    i += 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            b if b == quote => return start + i as u32 + 1,
            _ => i += 1,
        }
    }
    end
}

/// The scalar node written at `span`. Inlined into the tree's event
/// handling, its one caller, which holds the registers it would save.
#[inline(always)]
fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>, folded: Folded, span: Span) -> Node {
    let node_style = match style {
        ScalarStyle::Plain => Style::Plain,
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => Style::Quoted,
        ScalarStyle::Literal | ScalarStyle::Folded => Style::Block,
    };
    let refolded;
    let text = if style == ScalarStyle::Folded && folded == Folded::AsKustomizeWrites {
        refolded = compat::refold(text);
        refolded.as_deref().unwrap_or(text)
    } else {
        text
    };
    let value = match tag {
        Some(t) if t.is_yaml_core_schema() => match t.suffix.as_str() {
            "str" | "binary" | "timestamp" => Value::Str(text.into()),
            "null" => Value::Null,
            "bool" | "int" | "float" => {
                resolve_plain(text).unwrap_or_else(|| Value::Str(text.into()))
            }
            _ => Value::Str(text.into()),
        },
        // Application tags (`!env_var`, `!secret`): the content stays text.
        Some(_) => Value::Str(text.into()),
        None if node_style == Style::Plain => {
            resolve_plain(text).unwrap_or_else(|| Value::Str(text.into()))
        }
        None => Value::Str(text.into()),
    };
    Node::styled(value, span, node_style)
}

/// Plain scalars resolved as go-yaml v3 (kustomize, Flux) resolves them
/// (gopkg.in/yaml.v3 resolve.go, `resolve`): the YAML 1.2 core schema
/// words, then for text starting with a digit or sign Go's
/// `strconv.ParseInt(s, 0, 64)` with every `_` removed, then `ParseUint`,
/// then floats matching go-yaml's `yamlStyleFloat`. YAML 1.1 words such as
/// `on` and `yes` stay strings here; [`Node::as_bool_lenient`] reads them
/// where a setting is boolean.
///
/// Inlined: most keys and values are told apart by their first byte
/// without a call (with `#[inline]` alone the tree builder kept it).
#[inline(always)]
pub fn resolve_plain(text: &str) -> Option<Value> {
    // Every word and number below starts with one of these: most keys
    // and values are told apart by their first byte, and of those that
    // start as a word does (`name`, `type`), by their length.
    match text.as_bytes().first() {
        None | Some(b'.' | b'+' | b'-' | b'0'..=b'9') => {}
        Some(b'~' | b'n' | b'N' | b't' | b'T' | b'f' | b'F') if text.len() <= 5 => {}
        _ => return None,
    }
    resolve_word_or_number(text)
}

/// [`resolve_plain`] for text that starts as one of its words or
/// numbers does.
fn resolve_word_or_number(text: &str) -> Option<Value> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Some(Value::Float(f64::INFINITY));
        }
        "-.inf" | "-.Inf" | "-.INF" => return Some(Value::Float(f64::NEG_INFINITY)),
        ".nan" | ".NaN" | ".NAN" => return Some(Value::Float(f64::NAN)),
        _ => {}
    }
    match text.as_bytes()[0] {
        // go-yaml hands these to Go's ParseFloat, which also reads `.5e3`.
        b'.' => is_yaml_float(text)
            .then(|| text.parse().ok().map(Value::Float))
            .flatten(),
        b'0'..=b'9' | b'-' | b'+' => {
            // Copied only when there is a `_` to take out: most numbers
            // (and the versions and dates that start like one) have none.
            let plain = match text.contains('_') {
                true => std::borrow::Cow::Owned(text.replace('_', "")),
                false => std::borrow::Cow::Borrowed(text),
            };
            if let Some(v) = go_parse_int(&plain) {
                return Some(v);
            }
            is_yaml_float(&plain)
                .then(|| plain.parse().ok().map(Value::Float))
                .flatten()
        }
        _ => None,
    }
}

mod agree;
mod numbers;
pub use agree::block_scanner_differs;
use numbers::{go_parse_int, is_yaml_float};

#[cfg(test)]
mod tests;
