//! Repository paths as hash keys, hashed by their bytes. std hashes a
//! `Path` component by component (a test of every byte for a separator
//! and a hasher write per component, about 500 instructions a path),
//! and compares two unequal paths component by component from the back;
//! the disk's listings, the source map and the builds' maps hash and
//! compare a path per question, 16 M instructions of a 465 M lint of
//! joryirving__home-ops.
//!
//! A path equals another when their components do (`a//b/./c/` is
//! `a/b/c`), so its bytes may hash only when they are the bytes its
//! components give back: the paths the repository's walk and
//! [`crate::source::join_within`] make are, and any other is hashed by
//! that normal form instead, so that equal paths always hash alike.

use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A path kept as a map key: hashed by its bytes, and compared by them
/// when both are in normal form.
#[derive(Clone, Debug)]
pub struct PathKey<P = PathBuf> {
    path: P,
    /// The path's bytes are the bytes of its components, joined.
    normal: bool,
}

/// A path looked up in a map of [`PathKey`]s (`map.get(&PathKey::of(p))`).
pub type PathQuery<'a> = PathKey<&'a Path>;

impl<P: AsRef<Path>> PathKey<P> {
    pub fn new(path: P) -> PathKey<P> {
        let normal = is_normal(path.as_ref().as_os_str().as_bytes());
        PathKey { path, normal }
    }

    pub fn as_path(&self) -> &Path {
        self.path.as_ref()
    }

    /// Bytes that order as the path's components do (`Path`'s `Ord`): per
    /// component its kind's rank in `Component`'s order (a prefix, the root,
    /// `.`, `..`, a name), its bytes, then a zero, which no name holds and
    /// which sorts before any byte a name does (a name before a longer one it
    /// starts). A sort compares these with one `memcmp` where `Path`'s
    /// comparison walks the components of both paths per pair.
    pub fn order_bytes(&self) -> Vec<u8> {
        use std::path::Component;
        let mut out = Vec::with_capacity(self.bytes().len() + 8);
        for part in self.as_path().components() {
            let (rank, name): (u8, &[u8]) = match part {
                Component::Prefix(p) => (0, p.as_os_str().as_bytes()),
                Component::RootDir => (1, b""),
                Component::CurDir => (2, b""),
                Component::ParentDir => (3, b""),
                Component::Normal(name) => (4, name.as_bytes()),
            };
            out.push(rank);
            out.extend_from_slice(name);
            out.push(0);
        }
        out
    }

    fn bytes(&self) -> &[u8] {
        self.as_path().as_os_str().as_bytes()
    }

    fn same<Q: AsRef<Path>>(&self, other: &PathKey<Q>) -> bool {
        // Two normal forms are equal only byte for byte; otherwise std's
        // comparison by components decides.
        self.bytes() == other.bytes()
            || (!(self.normal && other.normal) && self.as_path() == other.as_path())
    }
}

impl<'a> PathKey<&'a Path> {
    pub fn of(path: &'a Path) -> PathQuery<'a> {
        PathKey::new(path)
    }
}

impl PathKey {
    pub fn into_path(self) -> PathBuf {
        self.path
    }
}

impl From<PathBuf> for PathKey {
    fn from(path: PathBuf) -> PathKey {
        PathKey::new(path)
    }
}

impl From<&Path> for PathKey {
    fn from(path: &Path) -> PathKey {
        PathKey::new(path.to_path_buf())
    }
}

impl<P: AsRef<Path>> Deref for PathKey<P> {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.as_path()
    }
}

impl<P: AsRef<Path>> Hash for PathKey<P> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        if self.normal {
            self.bytes().hash(h);
        } else {
            let normal: PathBuf = self.as_path().components().collect();
            normal.as_os_str().as_bytes().hash(h);
        }
    }
}

impl<P: AsRef<Path>, Q: AsRef<Path>> PartialEq<PathKey<Q>> for PathKey<P> {
    fn eq(&self, other: &PathKey<Q>) -> bool {
        self.same(other)
    }
}

impl<P: AsRef<Path>> Eq for PathKey<P> {}

/// As the paths order: by components.
impl<P: AsRef<Path>> Ord for PathKey<P> {
    fn cmp(&self, other: &PathKey<P>) -> std::cmp::Ordering {
        self.as_path().cmp(other.as_path())
    }
}

impl<P: AsRef<Path>> PartialOrd for PathKey<P> {
    fn partial_cmp(&self, other: &PathKey<P>) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl hashbrown::Equivalent<PathKey> for PathQuery<'_> {
    fn equivalent(&self, key: &PathKey) -> bool {
        self.same(key)
    }
}

/// Whether `bytes` are what `Path::components` gives back, joined: no
/// empty part (`//`, a trailing `/`) and no `.` after the first part.
/// Paths with no `/` before a `/` or `.` (nearly all) are told eight
/// bytes at a time.
fn is_normal(bytes: &[u8]) -> bool {
    !may_hide_a_part(bytes) || precisely_normal(bytes)
}

fn precisely_normal(bytes: &[u8]) -> bool {
    bytes.iter().enumerate().all(|(i, &b)| {
        b != b'/'
            || match &bytes[i + 1..] {
                [] => i == 0,
                [b'/', ..] | [b'.'] | [b'.', b'/', ..] => false,
                _ => true,
            }
    })
}

/// Whether some `/` is followed by `/`, by `.` or by nothing: what every
/// path that is not in normal form holds. Sixteen bytes at a time, then
/// eight, then one.
fn may_hide_a_part(bytes: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = ONES << 7;
    // The high bit of each byte of `x` that is `c`, and no other.
    let equal = |x: u64, c: u8| {
        let t = x ^ (ONES * u64::from(c));
        !(((t & !HIGH) + !HIGH) | t) & HIGH
    };
    let word = |at: usize| u64::from_ne_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
    let (mut seen, mut at) = by_sixteen(bytes);
    while at + 9 <= bytes.len() {
        let (this, next) = (word(at), word(at + 1));
        seen |= equal(this, b'/') & (equal(next, b'/') | equal(next, b'.'));
        at += 8;
    }
    seen != 0
        || bytes.ends_with(b"/")
        || bytes[at..]
            .windows(2)
            .any(|w| w[0] == b'/' && matches!(w[1], b'/' | b'.'))
}

/// [`may_hide_a_part`]'s test over the first sixteen-byte blocks of
/// `bytes` that have a byte after them, by SSE2 (part of every x86_64):
/// nonzero if one holds such a `/`, and where the blocks end. The disk's
/// and the source map's questions test a path each (1.75 M instructions
/// of joryirving__home-ops, eight bytes at a time).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
fn by_sixteen(bytes: &[u8]) -> (u64, usize) {
    use std::arch::x86_64::{
        _mm_and_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let mut seen = 0;
    let mut at = 0;
    while at + 17 <= bytes.len() {
        let (this, next) = (&bytes[at..at + 16], &bytes[at + 1..at + 17]);
        // SAFETY: the build enables SSE2 (the cfg above), and each load
        // reads the sixteen bytes of its slice, unaligned loads allowed.
        let hit = unsafe {
            let (this, next) = (
                _mm_loadu_si128(this.as_ptr().cast()),
                _mm_loadu_si128(next.as_ptr().cast()),
            );
            let slash = _mm_set1_epi8(b'/' as i8);
            let after = _mm_or_si128(
                _mm_cmpeq_epi8(next, slash),
                _mm_cmpeq_epi8(next, _mm_set1_epi8(b'.' as i8)),
            );
            _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(this, slash), after))
        };
        seen |= hit as u64;
        at += 16;
    }
    (seen, at)
}

/// Without SSE2, the blocks are left to the eight-byte test.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
fn by_sixteen(_: &[u8]) -> (u64, usize) {
    (0, 0)
}

/// A set of paths hashed by their bytes.
pub type PathKeySet = hashbrown::HashSet<PathKey, super::PathHasher>;
/// A map keyed by paths hashed by their bytes.
pub type PathKeyMap<V> = hashbrown::HashMap<PathKey, V, super::PathHasher>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    /// Every path of up to five bytes of `a`, `.` and `/`: each way a
    /// path can differ from its normal form.
    fn small_paths() -> Vec<String> {
        crate::yaml::every_string_of(&["a", ".", "/"], 5)
    }

    #[test]
    fn keys_are_equal_and_hash_alike_as_std_paths_are_equal() {
        let hasher = super::super::PathHasher::default();
        let paths = small_paths();
        let keys: Vec<PathKey> = paths.iter().map(|p| PathKey::from(Path::new(p))).collect();
        for (p, key) in paths.iter().zip(&keys) {
            let by_components: PathBuf = Path::new(p).components().collect();
            assert_eq!(
                key.normal,
                by_components.as_os_str() == p.as_str(),
                "normal {p:?}"
            );
            for (q, other) in paths.iter().zip(&keys) {
                let equal = Path::new(p) == Path::new(q);
                assert_eq!(key == other, equal, "{p:?} == {q:?}");
                assert_eq!(PathKey::of(Path::new(q)) == *key, equal, "{q:?} == {p:?}");
                if equal {
                    assert_eq!(
                        hasher.hash_one(key),
                        hasher.hash_one(PathKey::of(Path::new(q))),
                        "hash {p:?} {q:?}"
                    );
                }
            }
        }
    }

    /// Longer paths, each small one at every place in two blocks of
    /// sixteen bytes (and so in a word of eight), before and after other
    /// parts.
    #[test]
    fn normal_form_is_told_at_any_length() {
        for small in small_paths() {
            for pad in 0..34 {
                let pad = "a".repeat(pad);
                for p in [
                    format!("{pad}{small}/aaaaaaaa"),
                    format!("aaaaaaaa/{pad}{small}"),
                    format!("{pad}{small}{small}{small}"),
                ] {
                    let by_components: PathBuf = Path::new(&p).components().collect();
                    assert_eq!(
                        is_normal(p.as_bytes()),
                        by_components.as_os_str() == p.as_str(),
                        "{p:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn order_bytes_order_as_paths_do() {
        let paths = crate::yaml::every_string_of(&["a", "b", "-", ".", "/"], 4);
        let ordered: Vec<Vec<u8>> = paths
            .iter()
            .map(|p| PathKey::of(Path::new(p)).order_bytes())
            .collect();
        for (p, p_bytes) in paths.iter().zip(&ordered) {
            for (q, q_bytes) in paths.iter().zip(&ordered) {
                assert_eq!(
                    p_bytes.cmp(q_bytes),
                    Path::new(p).cmp(Path::new(q)),
                    "{p:?} {q:?}"
                );
            }
        }
    }

    #[test]
    fn a_path_is_found_by_any_spelling_of_it() {
        let mut map = PathKeyMap::default();
        map.insert(PathKey::from(PathBuf::from("apps/db")), 1);
        map.insert(PathKey::from(PathBuf::from("./x/")), 2);
        for (spelling, found) in [
            ("apps/db", Some(&1)),
            ("apps//db/", Some(&1)),
            ("apps/./db/.", Some(&1)),
            ("apps/db/..", None),
            ("./x", Some(&2)),
            ("x", None),
        ] {
            assert_eq!(
                map.get(&PathKey::of(Path::new(spelling))),
                found,
                "{spelling:?}"
            );
        }
    }
}
