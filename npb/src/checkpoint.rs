//! What every port shares for regeneration: the checkpoint interval, the checkpoint call
//! at a port's iteration boundaries, the way back in for a replica restored from its
//! sibling's latest checkpoint, and a compact encoding of the large f64 arrays that
//! ports hand over. Owns no port's state: each port defines its own small state struct
//! (what the rest of its run needs) and where it checkpoints.
//!
//! Contract with the ports: `restored` is asked once, before the port communicates;
//! when it answers `Some`, the port re-creates its communicators by the same calls as
//! before (they are answered from the snapshot), skips its initialization and every
//! communication that precedes the checkpointed point (start-up broadcasts, untimed
//! warm-up, barriers, pre-loop norms), prints nothing it printed before that point, and
//! goes on with the iteration after the checkpointed one. `save` is called at the same
//! point in every replica of a rank, with no request outstanding.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;
use std::time::Instant;

use serde::de::{DeserializeOwned, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use volpex::{Communicator, Universe};

use crate::common::NpbError;

/// Environment variable that makes every rank print its checkpoint count, state size and
/// time spent checkpointing to stderr at the end of the run (for measuring the cost).
pub const STATS_VAR: &str = "NPB_CHECKPOINT_STATS";

/// Test hook: a directory where every rank also writes each checkpointed state, as
/// `ckpt-N.rank-R` (N counts this rank's checkpoints from 1). Use it with one replica
/// per rank (replicas of a rank would write the same files).
pub const DUMP_VAR: &str = "NPB_CHECKPOINT_DUMP";

/// Test hook: restart the whole job from the states dumped at one checkpoint, given as
/// the path without the rank suffix (`DIR/ckpt-N`): every rank reads
/// `DIR/ckpt-N.rank-R` and resumes from it as a restored replica would. Every rank
/// skips the same communication, so a fresh job agrees with itself without the
/// runtime's snapshot: this exercises the ports' restore paths on many ranks without
/// regeneration.
pub const RESTART_VAR: &str = "NPB_RESTART_FROM";

/// Up to this many bytes of state per rank, a checkpoint costs little more than its
/// fixed part (well under a millisecond to a few milliseconds); ports whose state grows
/// with the grid checkpoint every iteration up to it and less often above it.
pub const SMALL_STATE: usize = 2 << 20;

/// The default interval of a port whose state is `bytes` per rank: every iteration for a
/// small state, else `large_every`. At class A on 4 ranks a checkpoint of MG's or FT's
/// state (33 to 36 MB) costs about as much as one or two of their iterations (0.1 to
/// 0.2 s, most of it in the runtime's encoding of the snapshot), so they take fewer,
/// as few as still keep the traffic a sender must retain for a regenerated replica
/// (everything since its destination's latest checkpoint) within the runtime's default
/// replay budget (`VOLPEX_REPLAY_BYTES`, 64 MiB).
pub fn interval_for(bytes: usize, large_every: u64) -> u64 {
    if bytes <= SMALL_STATE {
        1
    } else {
        large_every
    }
}

/// Where a restored state comes from.
enum Source<'a> {
    /// The runtime: `Universe::restored` (a regenerated replica restored from its
    /// sibling's latest checkpoint).
    Runtime(&'a Universe),
    /// Nothing to restore from and nothing to checkpoint to (a port run without a
    /// universe, in unit tests).
    #[cfg(test)]
    Bytes(std::cell::RefCell<Option<Vec<u8>>>),
}

/// The checkpoint policy of one run and the way back in for a restored replica.
pub struct Checkpoints<'a> {
    source: Source<'a>,
    /// `--checkpoint-every`: None takes the port's default; Some(0) never checkpoints.
    every: Option<u64>,
    /// Whether to measure (STATS_VAR is set).
    stats: bool,
    taken: Cell<u64>,
    seconds: Cell<f64>,
    last_bytes: Cell<usize>,
    encode_seconds: Cell<f64>,
    /// This process's rank in the world (names the dump and restart files).
    rank: i32,
    /// DUMP_VAR.
    dump: Option<std::path::PathBuf>,
    /// RESTART_VAR, until `restored` takes it.
    restart: std::cell::RefCell<Option<std::path::PathBuf>>,
    /// In tests: the encoded state of every checkpoint taken.
    #[cfg(test)]
    pub recorded: std::cell::RefCell<Vec<Vec<u8>>>,
}

impl<'a> Checkpoints<'a> {
    /// Checkpoints of world rank `rank` through `universe`, every `every` units (None:
    /// the port's default; 0: never).
    pub fn new(universe: &'a Universe, rank: i32, every: Option<u64>) -> Checkpoints<'a> {
        let mut ck = Checkpoints::with_source(Source::Runtime(universe), every);
        ck.rank = rank;
        ck.dump = std::env::var_os(DUMP_VAR).map(Into::into);
        ck.restart = std::cell::RefCell::new(std::env::var_os(RESTART_VAR).map(Into::into));
        ck
    }

    fn with_source(source: Source<'a>, every: Option<u64>) -> Checkpoints<'a> {
        Checkpoints {
            source,
            every,
            rank: 0,
            dump: None,
            restart: std::cell::RefCell::new(None),
            stats: std::env::var_os(STATS_VAR).is_some(),
            taken: Cell::new(0),
            seconds: Cell::new(0.0),
            last_bytes: Cell::new(0),
            encode_seconds: Cell::new(0.0),
            #[cfg(test)]
            recorded: std::cell::RefCell::new(Vec::new()),
        }
    }

    /// In tests: a run that records its checkpoints and, given `restore`, starts from
    /// that encoded state as a restored replica would.
    #[cfg(test)]
    pub fn for_test(every: Option<u64>, restore: Option<Vec<u8>>) -> Checkpoints<'static> {
        Checkpoints::with_source(Source::Bytes(std::cell::RefCell::new(restore)), every)
    }

    /// The interval in the port's units: the flag's, else `default`; 0 means never.
    pub fn every(&self, default: u64) -> u64 {
        self.every.unwrap_or(default)
    }

    /// The state this rank handed over at its latest checkpoint when this process is a
    /// restored replica; None otherwise. Ask it once, before communicating.
    pub fn restored<T: DeserializeOwned>(&self) -> Result<Option<T>, NpbError> {
        if let Some(prefix) = self.restart.borrow_mut().take() {
            let path = rank_file(&prefix, self.rank);
            let bytes = std::fs::read(&path).map_err(|e| {
                NpbError::Setup(format!(
                    "{RESTART_VAR}: cannot read {}: {e}",
                    path.display()
                ))
            })?;
            return postcard::from_bytes(&bytes).map(Some).map_err(|e| {
                NpbError::Setup(format!(
                    "{RESTART_VAR}: {} is no state of this run: {e}",
                    path.display()
                ))
            });
        }
        match &self.source {
            Source::Runtime(u) => Ok(u.restored::<T>()?),
            #[cfg(test)]
            Source::Bytes(b) => match b.borrow_mut().take() {
                Some(bytes) => postcard::from_bytes(&bytes)
                    .map(Some)
                    .map_err(|e| NpbError::Setup(format!("restore: {e}"))),
                None => Ok(None),
            },
        }
    }

    /// Checkpoints `state()` when `done` (units completed so far, of `total`) is a
    /// multiple of the interval (`default` unless the flag says otherwise), except after
    /// the last unit: what follows it (a norm, a checksum, the report) is cheaper to redo
    /// than a checkpoint. Same point in every replica, no request outstanding.
    pub fn save<T: Serialize>(
        &self,
        world: &Communicator,
        default: u64,
        (done, total): (u64, u64),
        state: impl FnOnce() -> T,
    ) -> Result<(), NpbError> {
        let every = self.every(default);
        if every == 0 || !done.is_multiple_of(every) || done >= total {
            return Ok(());
        }
        let state = state();
        let t0 = Instant::now();
        match &self.source {
            Source::Runtime(_) => world.checkpoint(&state)?,
            #[cfg(test)]
            Source::Bytes(_) => {
                let _ = world;
                let bytes = postcard::to_stdvec(&state)
                    .map_err(|e| NpbError::Setup(format!("checkpoint: {e}")))?;
                self.recorded.borrow_mut().push(bytes);
            }
        }
        self.seconds
            .set(self.seconds.get() + t0.elapsed().as_secs_f64());
        self.taken.set(self.taken.get() + 1);
        if let Some(dir) = &self.dump {
            let path = rank_file(&dir.join(format!("ckpt-{}", self.taken.get())), self.rank);
            let bytes = postcard::to_stdvec(&state)
                .map_err(|e| NpbError::Setup(format!("{DUMP_VAR}: {e}")))?;
            std::fs::write(&path, bytes).map_err(|e| {
                NpbError::Setup(format!("{DUMP_VAR}: cannot write {}: {e}", path.display()))
            })?;
        }
        if self.stats {
            // The application state's encoding alone (the first thing `checkpoint` does),
            // to tell it from the rest of the checkpoint's cost.
            let t0 = Instant::now();
            let bytes = postcard::to_stdvec(&state).map(|b| b.len()).unwrap_or(0);
            self.encode_seconds
                .set(self.encode_seconds.get() + t0.elapsed().as_secs_f64());
            self.last_bytes.set(bytes);
        }
        Ok(())
    }

    /// With STATS_VAR set: one line on stderr with this rank's checkpoints, the size of
    /// the last state and the time spent in `checkpoint`; rank 0 adds the checked
    /// quantities bit for bit (`checks`), to compare runs.
    pub fn report(&self, bench: &str, rank: i32, checks: &[f64]) {
        if !self.stats {
            return;
        }
        if rank == 0 {
            let bits: Vec<String> = checks
                .iter()
                .map(|x| format!("{:016x}", x.to_bits()))
                .collect();
            eprintln!("npb checks: {bench}: {}", bits.join(" "));
        }
        let n = self.taken.get();
        let s = self.seconds.get();
        let each = |x: f64| if n > 0 { x / n as f64 } else { 0.0 };
        eprintln!(
            "npb checkpoint stats: {bench} rank {rank}: {n} checkpoints, state {} bytes, {s:.4} s in total, {:.4} s each (encoding the state alone: {:.4} s each)",
            self.last_bytes.get(),
            each(s),
            each(self.encode_seconds.get()),
        );
    }
}

/// `PREFIX.rank-R`.
fn rank_file(prefix: &std::path::Path, rank: i32) -> std::path::PathBuf {
    let mut name = prefix.as_os_str().to_owned();
    name.push(format!(".rank-{rank}"));
    name.into()
}

/// A slice of f64 handed over as one byte string (little-endian), so that large arrays
/// cost a copy rather than a per-element encoding. Borrowed when checkpointing, owned
/// when restored.
#[derive(Debug, Clone, PartialEq)]
pub struct F64s<'a>(pub Cow<'a, [f64]>);

impl<'a> F64s<'a> {
    /// Borrows `v` for a checkpoint.
    pub fn of(v: &'a [f64]) -> F64s<'a> {
        F64s(Cow::Borrowed(v))
    }

    /// The values, copied into `dst` when the lengths agree (a restored state from a
    /// sibling of the same run always fits; anything else is refused, not trusted).
    pub fn copy_into(&self, dst: &mut [f64], what: &str) -> Result<(), NpbError> {
        if self.0.len() != dst.len() {
            return Err(NpbError::Setup(format!(
                "restored {what} has {} values, this run needs {}",
                self.0.len(),
                dst.len()
            )));
        }
        dst.copy_from_slice(&self.0);
        Ok(())
    }
}

impl Serialize for F64s<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if cfg!(target_endian = "little") {
            s.serialize_bytes(bytemuck::cast_slice(&self.0))
        } else {
            let bytes: Vec<u8> = self.0.iter().flat_map(|x| x.to_le_bytes()).collect();
            s.serialize_bytes(&bytes)
        }
    }
}

impl<'de, 'a> Deserialize<'de> for F64s<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<F64s<'a>, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Vec<f64>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a byte string of little-endian f64 values")
            }
            fn visit_bytes<E: serde::de::Error>(self, b: &[u8]) -> Result<Vec<f64>, E> {
                if !b.len().is_multiple_of(8) {
                    return Err(E::invalid_length(b.len(), &self));
                }
                Ok(b.chunks_exact(8)
                    .map(|c| {
                        let mut a = [0u8; 8];
                        a.copy_from_slice(c);
                        f64::from_le_bytes(a)
                    })
                    .collect())
            }
            fn visit_byte_buf<E: serde::de::Error>(self, b: Vec<u8>) -> Result<Vec<f64>, E> {
                self.visit_bytes(&b)
            }
        }
        d.deserialize_bytes(V).map(|v| F64s(Cow::Owned(v)))
    }
}

/// The error of a restored state that does not fit this run.
pub fn misfit(what: &str) -> NpbError {
    NpbError::Setup(format!("restored state does not fit this run: {what}"))
}

/// `Ok(())` when `ok`, else the misfit error (checks of restored states).
pub fn ensure(ok: bool, what: &str) -> Result<(), NpbError> {
    if ok {
        Ok(())
    } else {
        Err(misfit(what))
    }
}

/// Encodes `state` as a checkpoint does and decodes it as a restore does (unit tests).
#[cfg(test)]
pub fn round_trip<T: Serialize, U: DeserializeOwned>(state: &T) -> U {
    let bytes = postcard::to_stdvec(state).expect("encode");
    postcard::from_bytes(&bytes).expect("decode")
}

/// A port's entry point.
#[cfg(test)]
pub type Port = fn(
    &Communicator,
    crate::common::Class,
    &Checkpoints,
) -> Result<crate::common::Report, NpbError>;

/// Runs `port` on a one-process world recording its checkpoints (every `every` units,
/// None: the port's default), then once more from each recorded state as a restored
/// replica would: every resumed run verifies, computes the checked quantities bit for
/// bit as the uninterrupted one, and takes exactly the checkpoints that followed the
/// one it resumed from. Returns the recorded states.
#[cfg(test)]
pub fn assert_resumes_from_every_checkpoint(
    port: Port,
    class: crate::common::Class,
    every: Option<u64>,
) -> Vec<Vec<u8>> {
    let universe = volpex::initialize().expect("a one-process world");
    let world = universe.world();
    let ck = Checkpoints::for_test(every, None);
    let full = port(&world, class, &ck).expect("uninterrupted run");
    assert!(full.verified, "{} uninterrupted run verifies", full.name);
    let recorded = ck.recorded.take();
    assert!(!recorded.is_empty(), "{} checkpoints", full.name);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    for (i, state) in recorded.iter().enumerate() {
        let ck = Checkpoints::for_test(every, Some(state.clone()));
        let resumed = port(&world, class, &ck).expect("resumed run");
        let what = format!("{} resumed from checkpoint {}", full.name, i + 1);
        assert!(resumed.verified, "{what} verifies");
        assert_eq!(bits(&resumed.checks), bits(&full.checks), "{what}: checks");
        assert_eq!(
            ck.recorded.borrow().len(),
            recorded.len() - i - 1,
            "{what}: checkpoints after it"
        );
    }
    recorded
}

/// Decodes every recorded state as `T`, and checks that encoding it again and decoding
/// that gives it back equal (the postcard round trip of a port's state).
#[cfg(test)]
pub fn assert_states_round_trip<T>(recorded: &[Vec<u8>])
where
    T: Serialize + DeserializeOwned + PartialEq + fmt::Debug,
{
    for bytes in recorded {
        let state: T = postcard::from_bytes(bytes).expect("a recorded state decodes");
        let back: T = round_trip(&state);
        assert_eq!(back, state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f64s_round_trip_bit_for_bit() {
        let v = vec![0.0, -0.0, 1.5, f64::MIN_POSITIVE, f64::MAX, -3.25e-300];
        let back: F64s = round_trip(&F64s::of(&v));
        let bits: Vec<u64> = back.0.iter().map(|x| x.to_bits()).collect();
        let want: Vec<u64> = v.iter().map(|x| x.to_bits()).collect();
        assert_eq!(bits, want);
    }

    #[test]
    fn f64s_refuses_a_torn_byte_string() {
        let bytes = postcard::to_stdvec(&serde_bytes_like(&[1, 2, 3])).expect("encode");
        assert!(postcard::from_bytes::<F64s>(&bytes).is_err());
    }

    /// A byte string as serde encodes one.
    fn serde_bytes_like(b: &[u8]) -> impl Serialize + '_ {
        struct B<'a>(&'a [u8]);
        impl Serialize for B<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(self.0)
            }
        }
        B(b)
    }
}
