//! The block scanner's events handed on as they are scanned, a batch of
//! whole documents at a time (see [`super::scan`]).

use super::{Scanner, Spanned};

/// Events handed on at a time, once that many are scanned and a
/// document has closed: enough to pay for moving the open document's.
pub(super) const BATCH: usize = 4096;

/// The scanner's events, see [`super::scan`].
pub(in crate::yaml) struct Events<'t> {
    pub(super) scanner: Scanner<'t>,
    /// Events of closed documents, handed on in order.
    pub(super) ready: std::vec::IntoIter<Spanned<'t>>,
    /// Where the next line starts; `None` once the stream has ended or
    /// the text left the subset.
    pub(super) line: Option<usize>,
    pub(super) open_doc: bool,
}

impl<'t> Iterator for Events<'t> {
    type Item = Result<Spanned<'t>, (u32, String)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(event) = self.ready.next() {
                return Some(Ok(event));
            }
            let Some(line) = self.line else {
                // The stream has ended: what is left was all closed.
                let rest = std::mem::take(&mut self.scanner.events);
                self.scanner.closed = 0;
                if rest.is_empty() {
                    return None;
                }
                self.ready = rest.into_iter();
                continue;
            };
            match self.scanner.step(line, &mut self.open_doc) {
                None => {
                    self.line = None;
                    self.scanner.events.clear();
                    return Some(Err((line as u32, "beyond the block scanner".into())));
                }
                Some(next) => self.line = next,
            }
            let closed = self.scanner.closed;
            if closed >= BATCH {
                let open = self.scanner.events.split_off(closed);
                self.ready = std::mem::replace(&mut self.scanner.events, open).into_iter();
                self.scanner.closed = 0;
            }
        }
    }
}
