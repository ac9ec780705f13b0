//! Name interning. The hot path stores a `&'static str` as its address and length (no lookup,
//! no lock); at `stop` each distinct (address, length) is resolved once and interned by content
//! to a [`NameId`], so the same text at two call sites gets one id.

use std::collections::HashMap;

use threadlab_trace::NameId;

#[derive(Default)]
pub(crate) struct Interner {
    by_ptr: HashMap<(u64, u32), NameId>,
    by_text: HashMap<String, NameId>,
    pub(crate) names: Vec<String>,
}

impl Interner {
    /// Interns a name by content.
    pub(crate) fn intern(&mut self, text: &str) -> NameId {
        if let Some(id) = self.by_text.get(text) {
            return *id;
        }
        let id = NameId(self.names.len() as u32);
        self.names.push(text.to_owned());
        self.by_text.insert(text.to_owned(), id);
        id
    }

    /// Interns a name recorded as (address, length) of a `&'static str` by this process.
    ///
    /// # Safety
    /// `ptr` and `len` must come from a `&'static str` recorded by this process (which the
    /// recorder guarantees for the name fields of its records).
    pub(crate) unsafe fn intern_static(&mut self, ptr: u64, len: u32) -> NameId {
        if let Some(id) = self.by_ptr.get(&(ptr, len)) {
            return *id;
        }
        // SAFETY: by the contract, this is the address and (possibly shortened) length of a
        // `&'static str`, so the bytes are valid for the whole program.
        let bytes: &'static [u8] =
            unsafe { std::slice::from_raw_parts(ptr as *const u8, len as usize) };
        let id = self.intern(std::str::from_utf8(bytes).unwrap_or("?"));
        self.by_ptr.insert((ptr, len), id);
        id
    }
}

/// Splits a `&'static str` into the (address, length) stored in records.
#[inline(always)]
pub(crate) fn raw_name(name: &'static str) -> (u64, u32) {
    (
        name.as_ptr() as u64,
        name.len().min(u32::MAX as usize) as u32,
    )
}
