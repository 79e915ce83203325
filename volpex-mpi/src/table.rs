//! `Table`: the objects of one kind (communicators, datatypes, requests, ...) behind
//! their C handles, with every lookup checked: a handle of another kind, a null handle, a
//! freed one or one out of range is an error naming the kind, never an index panic.

use std::os::raw::c_int;

use crate::error::{MpiError, Result};

enum Slot<T> {
    Free,
    Used(T),
    /// Taken out by a call that is waiting on it; put back by the same call.
    Busy,
}

/// The objects of one kind, by handle.
pub struct Table<T> {
    tag: c_int,
    what: &'static str,
    class: c_int,
    slots: Vec<Slot<T>>,
    free: Vec<usize>,
    /// Slots 1..=predefined hold predefined objects, which cannot be freed.
    predefined: usize,
}

impl<T> Table<T> {
    /// An empty table of handles tagged `tag`, naming its objects `what` in errors of
    /// class `class`. Slot 0 is the null handle.
    pub fn new(tag: c_int, what: &'static str, class: c_int) -> Table<T> {
        Table {
            tag,
            what,
            class,
            slots: vec![Slot::Free],
            free: Vec::new(),
            predefined: 0,
        }
    }

    /// Adds a predefined object (in handle order, right after creation).
    pub fn predefine(&mut self, v: T) -> c_int {
        let h = self.insert(v);
        self.predefined = self.slots.len() - 1;
        h
    }

    /// Adds an object, returns its handle.
    pub fn insert(&mut self, v: T) -> c_int {
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i] = Slot::Used(v);
                i
            }
            None => {
                self.slots.push(Slot::Used(v));
                self.slots.len() - 1
            }
        };
        self.tag | i as c_int
    }

    fn bad(&self, h: c_int, why: &str) -> MpiError {
        MpiError::new(
            self.class,
            format!("invalid {} handle {h:#x}: {why}", self.what),
        )
    }

    fn index(&self, h: c_int) -> Result<usize> {
        if h == 0 {
            return Err(self.bad(h, "the null handle"));
        }
        if h & !0x00ff_ffff != self.tag {
            return Err(self.bad(h, "not a handle of this kind"));
        }
        let i = (h & 0x00ff_ffff) as usize;
        match self.slots.get(i) {
            Some(Slot::Used(_)) | Some(Slot::Busy) => Ok(i),
            Some(Slot::Free) => Err(self.bad(h, "already freed")),
            None => Err(self.bad(h, "never created")),
        }
    }

    /// The object behind `h`.
    pub fn get(&self, h: c_int) -> Result<&T> {
        let i = self.index(h)?;
        match &self.slots[i] {
            Slot::Used(v) => Ok(v),
            _ => Err(self.bad(h, "in use by another call")),
        }
    }

    /// The object behind `h`, to change it.
    pub fn get_mut(&mut self, h: c_int) -> Result<&mut T> {
        let i = self.index(h)?;
        match &mut self.slots[i] {
            Slot::Used(v) => Ok(v),
            _ => Err(MpiError::new(
                self.class,
                format!("{} handle {h:#x} is in use by another call", self.what),
            )),
        }
    }

    /// Takes the object out, keeping its handle reserved until `put_back`.
    pub fn take(&mut self, h: c_int) -> Result<T> {
        let i = self.index(h)?;
        match std::mem::replace(&mut self.slots[i], Slot::Busy) {
            Slot::Used(v) => Ok(v),
            other => {
                self.slots[i] = other;
                Err(self.bad(h, "in use by another call"))
            }
        }
    }

    /// Returns an object `take` took to its handle.
    pub fn put_back(&mut self, h: c_int, v: T) {
        if let Ok(i) = self.index(h) {
            self.slots[i] = Slot::Used(v);
        }
    }

    /// Frees a handle `take` reserved.
    pub fn release(&mut self, h: c_int) {
        if let Ok(i) = self.index(h) {
            self.slots[i] = Slot::Free;
            self.free.push(i);
        }
    }

    /// Removes the object behind `h` (a predefined one is refused).
    pub fn remove(&mut self, h: c_int) -> Result<T> {
        let i = self.index(h)?;
        if i <= self.predefined {
            return Err(self.bad(h, "a predefined object cannot be freed"));
        }
        let v = self.take(h)?;
        self.release(h);
        Ok(v)
    }

    /// Drops every object that is not predefined.
    pub fn clear_created(&mut self) {
        self.slots.truncate(self.predefined + 1);
        self.free.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_checked() {
        let mut t: Table<u32> = Table::new(0x44 << 24, "communicator", 5);
        let a = t.predefine(10);
        let b = t.insert(20);
        assert_eq!(*t.get(a).unwrap(), 10);
        assert_eq!(*t.get(b).unwrap(), 20);
        assert!(t.get(0).is_err());
        assert!(t.get(0x4c00_0001).is_err());
        assert!(t.get(a + 7).is_err());
        assert!(t.remove(a).is_err(), "predefined");
        assert_eq!(t.remove(b).unwrap(), 20);
        assert_eq!(t.get(b).unwrap_err().class, 5);
        let v = t.take(a).unwrap();
        assert!(t.get(a).is_err(), "busy");
        t.put_back(a, v);
        assert_eq!(*t.get(a).unwrap(), 10);
    }
}
