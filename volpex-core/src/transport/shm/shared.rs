//! Memory that processes on one host share by load and store (MPI_Win_allocate_shared):
//! an anonymous memfd, sealed against resizing as a connection's segment is
//! (`segment`), mapped by each process, its descriptor passed over a Unix socket with
//! `SCM_RIGHTS` as a connection's setup passes its segment (`mod.rs`).
//!
//! Owns the mapping, its checks (seals, size) and passing the descriptor. Must never
//! hand out memory outside the mapping, nor map memory whose size another process could
//! still change; what the bytes mean is the caller's.

use std::fs::File;
use std::io::{self, IoSlice, IoSliceMut};
use std::num::NonZeroUsize;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

use nix::fcntl::{fcntl, FcntlArg, SealFlag};
use nix::sys::memfd::{memfd_create, MFdFlags};
use nix::sys::mman::{mmap, munmap, MapFlags, ProtFlags};
use nix::sys::socket::{recvmsg, sendmsg, ControlMessage, ControlMessageOwned, MsgFlags};

/// One mapping of a shared memfd, `len` bytes, zero when first made.
pub struct SharedMemory {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping belongs to this value alone (unmapped once, in `drop`); nothing in
// it is tied to the thread that made it, and the value hands out only its address and
// atomics inside it.
unsafe impl Send for SharedMemory {}
// SAFETY: as above; `&self` gives only the address and atomic words.
unsafe impl Sync for SharedMemory {}

impl SharedMemory {
    /// New memory of `len` bytes (more than 0), and the descriptor to pass to the
    /// processes that share it.
    pub fn create(len: usize) -> io::Result<(SharedMemory, OwnedFd)> {
        let fd = memfd_create(
            c"volpex-shared-window",
            MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING,
        )?;
        let file = File::from(fd);
        file.set_len(len as u64)?;
        fcntl(
            &file,
            FcntlArg::F_ADD_SEALS(
                SealFlag::F_SEAL_SHRINK | SealFlag::F_SEAL_GROW | SealFlag::F_SEAL_SEAL,
            ),
        )?;
        let mem = SharedMemory::map(&file, len)?;
        Ok((mem, OwnedFd::from(file)))
    }

    /// Maps memory another process made, once its seals and size say it is `len` bytes
    /// for good.
    pub fn open(fd: OwnedFd, len: usize) -> io::Result<SharedMemory> {
        let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
        let seals = SealFlag::from_bits_truncate(fcntl(&fd, FcntlArg::F_GET_SEALS)?);
        if !seals.contains(SealFlag::F_SEAL_SHRINK | SealFlag::F_SEAL_GROW) {
            return Err(bad("the shared memory can change size (not sealed)"));
        }
        let file = File::from(fd);
        if file.metadata()?.len() != len as u64 {
            return Err(bad("the shared memory has the wrong size"));
        }
        SharedMemory::map(&file, len)
    }

    fn map(fd: impl AsFd, len: usize) -> io::Result<SharedMemory> {
        let n = NonZeroUsize::new(len).ok_or(io::ErrorKind::InvalidInput)?;
        // SAFETY: a fresh shared mapping of the whole file (its size checked or set by
        // the caller, and sealed against shrinking), at an address the kernel picks: it
        // aliases no Rust memory.
        let ptr = unsafe {
            mmap(
                None,
                n,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
                fd,
                0,
            )?
        };
        Ok(SharedMemory {
            ptr: ptr.cast(),
            len,
        })
    }

    /// The address of the first byte (page aligned).
    pub fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    /// Bytes mapped.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no byte is mapped (never: `create` and `open` refuse 0).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `i`-th 8-byte word, as an atomic: the caller's control words (every process
    /// that shares the memory must use word `i` only through this).
    pub fn word(&self, i: usize) -> &AtomicU64 {
        assert!((i + 1) * 8 <= self.len, "word {i} outside the mapping");
        // SAFETY: inside the mapping (checked above), 8-byte aligned on a page-aligned
        // mapping, which lives as long as the borrow; accessed only atomically.
        unsafe { &*self.ptr.as_ptr().add(i * 8).cast::<AtomicU64>() }
    }
}

impl Drop for SharedMemory {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, of this length, unmapped only here; the
        // caller keeps no pointer into it past its own use of the value.
        let _ = unsafe { munmap(self.ptr.cast(), self.len) };
    }
}

/// Sends `bytes` and the descriptor `fd` over `sock` in one message.
pub fn send_fd(sock: &UnixStream, fd: impl AsFd, bytes: &[u8]) -> io::Result<()> {
    let fds = [fd.as_fd().as_raw_fd()];
    let sent = sendmsg::<()>(
        sock.as_raw_fd(),
        &[IoSlice::new(bytes)],
        &[ControlMessage::ScmRights(&fds)],
        MsgFlags::MSG_NOSIGNAL,
        None,
    )?;
    if sent != bytes.len() {
        return Err(io::ErrorKind::WriteZero.into());
    }
    Ok(())
}

/// Receives one message of `send_fd` into `buf`: its length, and its descriptor if it
/// carried exactly one (any other descriptors are closed).
pub fn recv_fd(sock: &UnixStream, buf: &mut [u8]) -> io::Result<(usize, Option<OwnedFd>)> {
    let mut space = nix::cmsg_space!([std::os::fd::RawFd; 4]);
    let mut iov = [IoSliceMut::new(buf)];
    let msg = recvmsg::<()>(
        sock.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )?;
    let mut fds: Vec<OwnedFd> = Vec::new();
    for c in msg.cmsgs()? {
        if let ControlMessageOwned::ScmRights(raw) = c {
            for fd in raw {
                // SAFETY: the kernel just installed `fd` in this process for this
                // message; nothing else owns it.
                fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
            }
        }
    }
    let n = msg.bytes;
    Ok((n, (fds.len() == 1).then(|| fds.remove(0))))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;

    /// Two mappings of one memory, the second made from the descriptor passed over a
    /// socket pair: a word stored through one is loaded through the other.
    #[test]
    fn memory_passed_over_a_socket_is_the_same_memory() {
        let (a, fd) = SharedMemory::create(8192).expect("memory");
        let (s, t) = UnixStream::pair().expect("a socket pair");
        send_fd(&s, &fd, b"len").expect("sent");
        let mut buf = [0u8; 8];
        let (n, got) = recv_fd(&t, &mut buf).expect("received");
        assert_eq!(&buf[..n], b"len");
        let b = SharedMemory::open(got.expect("a descriptor"), 8192).expect("mapped");
        a.word(3).store(42, Ordering::Release);
        assert_eq!(b.word(3).load(Ordering::Acquire), 42);
        assert_eq!(b.word(0).load(Ordering::Acquire), 0, "zero when made");
    }

    #[test]
    fn wrong_size_or_unsealed_memory_is_refused() {
        let (_a, fd) = SharedMemory::create(4096).expect("memory");
        let e = SharedMemory::open(fd, 8192).err().expect("refused");
        assert!(e.to_string().contains("wrong size"), "{e}");
        let fd = memfd_create(c"test", MFdFlags::MFD_CLOEXEC).expect("a memfd");
        let file = File::from(fd);
        file.set_len(4096).expect("sized");
        let e = SharedMemory::open(OwnedFd::from(file), 4096)
            .err()
            .expect("refused");
        assert!(e.to_string().contains("not sealed"), "{e}");
    }
}
