//! Where and how a node was written, and what its value came through, in
//! 16 bytes: a node is 40 (`Value` 24 and this), where a [`Span`], a
//! [`Style`] and an `Option<Arc<Origin>>` side by side made it 56, and the
//! trees are most of a large run's memory.
//!
//! The file, the byte range and the style are always here; the line and
//! the column share a word when they fit (a line below 2^19, a column
//! below 2^12: nearly every node). A node with an origin (a substituted
//! value, a value read from a Secret: few), or a place past those bounds,
//! holds instead a handle to a slot of a table the process shares, which
//! counts the handles and is freed with the last.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::node::{FileId, Origin, Span, Style};

const STYLE_SHIFT: u32 = 30;
const FILE_MASK: u32 = (1 << STYLE_SHIFT) - 1;
/// In `at`: the rest is a slot of the table, not a line and column.
const SLOTTED: u32 = 1 << 31;
const COL_BITS: u32 = 12;
const COL_MASK: u32 = (1 << COL_BITS) - 1;
const LINE_LIMIT: u32 = 1 << (31 - COL_BITS);

pub(crate) struct Place {
    /// The file, or when slotted nothing, below the style's two bits.
    file: u32,
    start: u32,
    end: u32,
    /// The line and the column, or [`SLOTTED`] and a slot.
    at: u32,
}

/// What a slotted place holds there, and how many places hold it (a
/// node's copies share its slot).
struct Slot {
    file: u32,
    line: u32,
    col: u32,
    handles: u32,
    origin: Option<Arc<Origin>>,
}

struct Table {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

static TABLE: Mutex<Table> = Mutex::new(Table {
    slots: Vec::new(),
    free: Vec::new(),
});

/// The table. Each change to it is whole before the lock is let go, so a
/// lock poisoned by a panic elsewhere is taken on.
fn table() -> MutexGuard<'static, Table> {
    TABLE.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Table {
    fn slot(&self, place: &Place) -> Option<&Slot> {
        self.slots.get(place.slot()?)
    }

    fn take(&mut self, slot: Slot) -> u32 {
        match self.free.pop() {
            Some(free) => {
                self.slots[free as usize] = slot;
                free
            }
            None => {
                self.slots.push(slot);
                // A slot is a live node's: 2^31 of them is past any
                // memory this could run in.
                u32::try_from(self.slots.len() - 1)
                    .ok()
                    .filter(|&s| s < SLOTTED)
                    .expect("fewer than 2^31 slotted places live")
            }
        }
    }
}

/// Whether the origin of some live node passes `test`. Origins are held
/// only in the table's slots, which are few beside the nodes, so a
/// question about every tree's origins is answered without walking one.
pub(crate) fn any_origin(test: impl Fn(&Origin) -> bool) -> bool {
    // A freed slot's origin is taken with its last handle.
    table()
        .slots
        .iter()
        .any(|s| s.origin.as_deref().is_some_and(&test))
}

impl Place {
    /// Every node is made here, so what nearly every node takes is
    /// inlined and the table's part kept out of line.
    #[inline]
    pub(crate) fn new(span: Span, style: Style, origin: Option<Arc<Origin>>) -> Place {
        match origin {
            None if fits(span) => Place {
                file: span.file.0 | (style_bits(style) << STYLE_SHIFT),
                start: span.start,
                end: span.end,
                at: (span.line << COL_BITS) | span.col,
            },
            _ => Place::slotted(span, style, origin),
        }
    }

    #[cold]
    #[inline(never)]
    fn slotted(span: Span, style: Style, origin: Option<Arc<Origin>>) -> Place {
        let slot = table().take(Slot {
            file: span.file.0,
            line: span.line,
            col: span.col,
            handles: 1,
            origin,
        });
        Place {
            file: style_bits(style) << STYLE_SHIFT,
            start: span.start,
            end: span.end,
            at: SLOTTED | slot,
        }
    }

    #[inline]
    fn slot(&self) -> Option<usize> {
        match self.at & SLOTTED {
            0 => None,
            _ => Some((self.at & !SLOTTED) as usize),
        }
    }

    #[inline]
    pub(crate) fn span(&self) -> Span {
        let (file, line, col) = match self.slot() {
            None => (
                self.file & FILE_MASK,
                self.at >> COL_BITS,
                self.at & COL_MASK,
            ),
            Some(_) => self.slotted_at(),
        };
        Span {
            file: FileId(file),
            start: self.start,
            end: self.end,
            line,
            col,
        }
    }

    #[cold]
    #[inline(never)]
    fn slotted_at(&self) -> (u32, u32, u32) {
        match table().slot(self) {
            Some(slot) => (slot.file, slot.line, slot.col),
            None => (0, 0, 0),
        }
    }

    #[inline]
    pub(crate) fn style(&self) -> Style {
        match self.file >> STYLE_SHIFT {
            0 => Style::Plain,
            1 => Style::Quoted,
            _ => Style::Block,
        }
    }

    pub(crate) fn set_style(&mut self, style: Style) {
        self.file = (self.file & FILE_MASK) | (style_bits(style) << STYLE_SHIFT);
    }

    pub(crate) fn origin(&self) -> Option<&Origin> {
        self.slot()?;
        let guard = table();
        let origin = guard.slot(self)?.origin.as_ref()?;
        let origin = Arc::as_ptr(origin);
        // SAFETY: this place counts among its slot's handles, so the slot
        // keeps its `Arc` (taken only when they fall to zero) while the
        // place lives, and the place cannot be dropped or changed while
        // borrowed; the `Arc`'s value does not move when the table grows.
        Some(unsafe { &*origin })
    }

    pub(crate) fn shared_origin(&self) -> Option<Arc<Origin>> {
        self.slot()?;
        let guard = table();
        guard.slot(self)?.origin.clone()
    }

    /// The same place with another span, style kept, origin kept.
    #[inline]
    pub(crate) fn set_span(&mut self, span: Span) {
        if self.slot().is_none() && fits(span) {
            let style = self.file & !FILE_MASK;
            *self = Place {
                file: span.file.0 | style,
                start: span.start,
                end: span.end,
                at: (span.line << COL_BITS) | span.col,
            };
            return;
        }
        let new = Place::new(span, self.style(), self.shared_origin());
        drop(std::mem::replace(self, new));
    }

    pub(crate) fn set_origin(&mut self, origin: Option<Arc<Origin>>) {
        let new = Place::new(self.span(), self.style(), origin);
        drop(std::mem::replace(self, new));
    }
}

/// Whether `span` is held without a slot.
#[inline]
fn fits(span: Span) -> bool {
    span.file.0 <= FILE_MASK && span.line < LINE_LIMIT && span.col <= COL_MASK
}

#[inline]
fn style_bits(style: Style) -> u32 {
    match style {
        Style::Plain => 0,
        Style::Quoted => 1,
        Style::Block => 2,
    }
}

impl Clone for Place {
    #[inline]
    fn clone(&self) -> Place {
        if let Some(slot) = self.slot() {
            retain(slot);
        }
        Place {
            file: self.file,
            start: self.start,
            end: self.end,
            at: self.at,
        }
    }
}

#[cold]
#[inline(never)]
fn retain(slot: usize) {
    if let Some(slot) = table().slots.get_mut(slot) {
        slot.handles += 1;
    }
}

impl Drop for Place {
    #[inline]
    fn drop(&mut self) {
        if let Some(slot) = self.slot() {
            release(slot);
        }
    }
}

#[cold]
#[inline(never)]
fn release(slot: usize) {
    let mut table = table();
    let Some(entry) = table.slots.get_mut(slot) else {
        return;
    };
    entry.handles -= 1;
    if entry.handles == 0 {
        let origin = entry.origin.take();
        table.free.push(slot as u32);
        // The origin is freed once the table is let go.
        drop(table);
        drop(origin);
    }
}

impl fmt::Debug for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Place")
            .field("span", &self.span())
            .field("style", &self.style())
            .field("origin", &self.origin())
            .finish()
    }
}

#[cfg(test)]
mod tests;
