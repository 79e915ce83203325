//! A datatype's type signature (MPI-3.1 section 4.1): the sequence of basic elements its
//! data is made of, without displacements, as runs. MPI_Get_elements counts it (section
//! 4.1.11: the basic elements a partial message holds) and external32 walks it (section
//! 13.5.2). Must never look at memory: the type map's byte blocks are `datatype`'s.

use std::sync::Arc;

use crate::datatype::predefined::Basic;
use crate::datatype::Datatype;

/// A run of a signature.
#[derive(Debug, Clone)]
pub enum SigPart {
    /// `n` basic elements of one kind.
    Basic(Basic, usize),
    /// `n` elements of a derived type (its own signature each).
    Nested(usize, Arc<Datatype>),
}

/// A type's signature and what is counted from it.
#[derive(Debug, Clone, Default)]
pub struct Signature {
    /// The runs, in type-map order.
    pub parts: Arc<[SigPart]>,
    /// Basic elements in one element of the type.
    pub elements: u64,
    /// Bytes of one element in external32.
    pub external: u64,
}

impl Signature {
    /// `n` basic elements of kind `b`.
    pub fn basic(runs: &[(Basic, usize)]) -> Signature {
        let mut s = Builder::default();
        for &(b, n) in runs {
            s.push_basic(b, n as u64);
        }
        s.finish()
    }
}

/// Builds a signature run by run, merging neighbours of one kind.
#[derive(Default)]
pub struct Builder {
    parts: Vec<SigPart>,
    elements: u64,
    external: u64,
}

impl Builder {
    fn push_basic(&mut self, b: Basic, n: u64) {
        self.elements = self.elements.saturating_add(n);
        self.external = self
            .external
            .saturating_add(n.saturating_mul(b.external() as u64));
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        match self.parts.last_mut() {
            Some(SigPart::Basic(lb, ln)) if *lb == b => *ln = ln.saturating_add(n),
            _ => self.parts.push(SigPart::Basic(b, n)),
        }
    }

    /// Appends `count` elements of `old`.
    pub fn push(&mut self, count: usize, old: &Arc<Datatype>) {
        if count == 0 || old.sig.elements == 0 {
            return;
        }
        if let [SigPart::Basic(b, n)] = &old.sig.parts[..] {
            return self.push_basic(*b, (count as u64).saturating_mul(*n as u64));
        }
        self.elements = self
            .elements
            .saturating_add((count as u64).saturating_mul(old.sig.elements));
        self.external = self
            .external
            .saturating_add((count as u64).saturating_mul(old.sig.external));
        match self.parts.last_mut() {
            Some(SigPart::Nested(n, t)) if Arc::ptr_eq(t, old) => *n = n.saturating_add(count),
            _ => self.parts.push(SigPart::Nested(count, old.clone())),
        }
    }

    /// The signature.
    pub fn finish(self) -> Signature {
        Signature {
            parts: self.parts.into(),
            elements: self.elements,
            external: self.external,
        }
    }
}

/// MPI_Get_elements: the basic elements in the first `bytes` bytes of data of elements
/// of `dt`; None if the data ends inside a basic element (MPI_UNDEFINED).
pub fn elements(dt: &Datatype, bytes: u64) -> Option<u64> {
    if dt.size == 0 {
        return (bytes == 0).then_some(0);
    }
    let size = dt.size as u64;
    let whole = (bytes / size).checked_mul(dt.sig.elements)?;
    whole.checked_add(partial(dt, bytes % size)?)
}

/// The basic elements in the first `bytes` (less than one element) of `dt`'s data.
fn partial(dt: &Datatype, mut bytes: u64) -> Option<u64> {
    let mut n = 0u64;
    for part in dt.sig.parts.iter() {
        if bytes == 0 {
            break;
        }
        let (unit, count) = match part {
            SigPart::Basic(b, k) => (b.native() as u64, *k as u64),
            SigPart::Nested(k, t) => (t.size as u64, *k as u64),
        };
        let all = unit.saturating_mul(count);
        let per = match part {
            SigPart::Basic(..) => 1,
            SigPart::Nested(_, t) => t.sig.elements,
        };
        if bytes >= all {
            n += count * per;
            bytes -= all;
            continue;
        }
        let k = bytes / unit;
        n += k * per;
        bytes -= k * unit;
        return match part {
            SigPart::Basic(..) => (bytes == 0).then_some(n),
            SigPart::Nested(_, t) => Some(n + partial(t, bytes)?),
        };
    }
    (bytes == 0).then_some(n)
}

/// Calls `f(kind, n)` for each run of basic elements of `count` elements of `dt`, in
/// order (runs of one kind may come split).
pub fn walk<E>(
    dt: &Datatype,
    count: usize,
    f: &mut impl FnMut(Basic, usize) -> Result<(), E>,
) -> Result<(), E> {
    if let [SigPart::Basic(b, n)] = &dt.sig.parts[..] {
        return f(*b, n.saturating_mul(count));
    }
    for _ in 0..count {
        for part in dt.sig.parts.iter() {
            match part {
                SigPart::Basic(b, n) => f(*b, *n)?,
                SigPart::Nested(n, t) => walk(t, *n, f)?,
            }
        }
    }
    Ok(())
}
