//! MPI-IO (MPI-3.1 chapter 13) through the C and Fortran interfaces, under replication
//! (docs/conformance/io.md). `tests/c/io.c` opens one file from every rank and writes it
//! with views (strided, struct filetypes), collectively (two-phase), independently,
//! nonblocking, split and ordered, reads it back and checks it, and checks the errors;
//! `tests/fortran/io_fortran.f90` does the same through the Fortran bindings. At `-r 1`, `-r 2`,
//! `-r 3` and with the writer replica killed, another replica killed, a replica stopped,
//! and two of three killed one after the other, the file is byte-identical to the
//! failure-free run's and the program's result line is the same. Every write reaches the
//! file layer (a replica that writes other bytes is caught by `VOLPEX_VERIFY_OUTPUT=1`),
//! the shared file pointer moves once when a leader dies right after moving it,
//! a full disk is the program's MPI_ERR_NO_SPACE, and on several test hosts sharing the
//! file system the file is the failure-free run's too.

use std::path::Path;

use volpex_tests::abi::{
    compile_c, compile_fortran, first_line, singleton, Mount, TempDir, DEADLINE,
};
use volpex_tests::{run, Run};

/// Rounds and milliseconds of work per round: about 1 s of writing.
const ROUNDS: &str = "30";
const WORK_MS: &str = "25";

/// The names in directory `dir`.
fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("read the test directory")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// Runs `exe DIR ROUNDS WORK_MS` with volpexrun's `args` in a fresh directory: the run,
/// the program's line and the file's bytes.
fn io_run(args: &[&str], exe: &Path, name: &str) -> (Run, String, Vec<u8>) {
    let dir = TempDir::new("io");
    let d = dir.0.to_string_lossy().into_owned();
    let r = run(args, exe, &[&d, ROUNDS, WORK_MS], DEADLINE);
    r.assert_no_leftovers();
    let line = first_line(r.ok(), name);
    let names = entries(&dir.0);
    assert_eq!(
        names,
        ["io.dat"],
        "{name} {args:?}: the directory\n{}",
        r.stderr
    );
    let bytes = std::fs::read(dir.0.join("io.dat")).expect("read io.dat");
    (r, line, bytes)
}

/// A run's volpexrun arguments, and the replica its fault must hit before it finished.
type Case<'a> = (&'a [&'a str], Option<(u64, u64)>);

/// The programs: (result line prefix, executable).
fn programs(dir: &TempDir) -> Vec<(&'static str, std::path::PathBuf)> {
    vec![
        ("io:", compile_c(dir, "io")),
        (
            "io_fortran:",
            compile_fortran("volpexf90", dir, "io_fortran.f90"),
        ),
    ]
}

#[test]
fn io_programs_run_alone() {
    let build = TempDir::new("io-build");
    for (name, exe) in programs(&build) {
        let dir = TempDir::new("io-alone");
        let out = singleton(&exe, &[&dir.0.to_string_lossy(), "2"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(&format!("{name} ok size 1")),
            "{name} alone:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn mpi_io_files_are_the_failure_free_runs_whatever_replicas_die() {
    let build = TempDir::new("io-build");
    for (name, exe) in programs(&build) {
        let (_, line, bytes) = io_run(&["-n", "3", "-r", "1"], &exe, name);
        let cases: &[Case] = &[
            (&["-n", "3", "-r", "2"], None),
            (&["-n", "3", "-r", "3"], None),
            // The writer of rank 0 (replica 0 at first), mid-run: its new incarnation
            // replays the program from the start.
            (
                &["-n", "3", "-r", "2", "--fault", "0.0:kill@0.3"],
                Some((0, 0)),
            ),
            (
                &["-n", "3", "-r", "2", "--fault", "1.1:kill@0.5"],
                Some((1, 1)),
            ),
            (
                &["-n", "3", "-r", "2", "--fault", "2.0:stop@0.4"],
                Some((2, 0)),
            ),
            (
                &[
                    "-n",
                    "3",
                    "-r",
                    "3",
                    "--fault",
                    "0.0:kill@0.2",
                    "--fault",
                    "0.1:kill@0.6",
                ],
                Some((0, 1)),
            ),
        ];
        for (args, hit) in cases {
            let (r, got_line, got) = io_run(args, &exe, name);
            assert_eq!(got_line, line, "{name} {args:?}\n{}", r.stderr);
            assert!(
                got == bytes,
                "{name} {args:?}: io.dat differs from the failure-free run's ({} bytes, {} expected)\n{}",
                got.len(),
                bytes.len(),
                r.stderr
            );
            if let Some((rank, replica)) = hit {
                assert_ne!(
                    r.state(*rank, *replica),
                    "finished",
                    "{name} {args:?}: the fault came after the replica finished\n{}",
                    r.stderr
                );
            }
        }
    }
}

/// Runs `io_collective DIR CALLS WORK_MS` with volpexrun's `args`: the run and the file.
fn collective_run(args: &[&str], exe: &Path) -> (Run, Vec<u8>) {
    collective_run_with(args, exe, &["40", "10"])
}

/// Runs `io_collective DIR PROG...` with volpexrun's `args`: the run and the file.
fn collective_run_with(args: &[&str], exe: &Path, prog: &[&str]) -> (Run, Vec<u8>) {
    let (r, mut files) = collective_files(args, exe, prog);
    let bytes = files.remove("io.dat").expect("io.dat written");
    (r, bytes)
}

/// Runs `io_collective DIR PROG...` with volpexrun's `args`: the run and every file in
/// DIR by name.
fn collective_files(
    args: &[&str],
    exe: &Path,
    prog: &[&str],
) -> (Run, std::collections::BTreeMap<String, Vec<u8>>) {
    let dir = TempDir::new("io-coll");
    let d = dir.0.to_string_lossy().into_owned();
    let mut prog_args = vec![d.as_str()];
    prog_args.extend_from_slice(prog);
    let r = run(args, exe, &prog_args, DEADLINE);
    collective_done(r, &dir.0)
}

/// A finished `io_collective` run that wrote into `dir`: checked, with every file in
/// `dir` by name.
fn collective_done(r: Run, dir: &Path) -> (Run, std::collections::BTreeMap<String, Vec<u8>>) {
    r.assert_no_leftovers();
    assert!(
        first_line(r.ok(), "io_collective:").starts_with("io_collective: ok"),
        "{}",
        r.stderr
    );
    let files = entries(dir)
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).expect("read a written file");
            (n, bytes)
        })
        .collect();
    (r, files)
}

/// A replay's run (`what`) wrote the files of the failure-free run, `expected`, and
/// nothing else, and no replica had to give up reading its files back.
fn assert_replayed_files(
    what: &str,
    r: &Run,
    expected: &std::collections::BTreeMap<String, Vec<u8>>,
    got: &std::collections::BTreeMap<String, Vec<u8>>,
) {
    for (name, bytes) in expected {
        assert!(
            got.get(name) == Some(bytes),
            "{what}: {name} differs from the failure-free run's\n{}",
            r.stderr
        );
    }
    assert_eq!(got.len(), expected.len(), "{what}: the directory");
    for said in [
        "cannot replay",
        "cannot be read back",
        "differs from the writer",
    ] {
        assert!(!r.stderr.contains(said), "{what}: {said}\n{}", r.stderr);
    }
}

/// The follower of a two-phase aggregator (replica 1 of rank 0 while replica 0 writes
/// the rank's files) receives no data block while its writer lives: it makes the writes
/// without their bytes and waits for its writer's report (docs/FILES.md, "Writes without
/// their bytes"). Its writer killed in the middle of the collective writes (at `-r 2`,
/// and at `-r 3` the writer and then its successor), the follower that takes over fetches
/// the blocks of the writes not reported applied from the senders' logs: the file is
/// the failure-free run's, and at least one run went through that fetch.
#[test]
fn a_collective_write_is_whole_when_the_aggregators_writer_dies_in_it() {
    let build = TempDir::new("io-build");
    let exe = compile_c(&build, "io_collective");
    let (_, expected) = collective_run(&["-n", "4", "-r", "1"], &exe);
    assert_eq!(expected.len(), 40 * 64 * 4096 * 4);
    let log = "VOLPEX_LOG=warn,volpexmpi::io=info";
    let mut fetched = 0;
    let cases: &[(&[&str], (u64, u64))] = &[
        (&["-r", "2", "--fault", "0.0:kill@0.3"], (0, 0)),
        (&["-r", "2", "--fault", "0.0:kill@0.5"], (0, 0)),
        (&["-r", "2", "--fault", "0.0:kill@0.7"], (0, 0)),
        (
            &[
                "-r",
                "3",
                "--fault",
                "0.0:kill@0.3",
                "--fault",
                "0.1:kill@0.6",
            ],
            (0, 1),
        ),
    ];
    // Whether a kill lands while writes are unreported depends on the machine's pace:
    // more kills at other moments, until one did (each run's file is checked alike).
    let more: &[(&[&str], (u64, u64))] = &[
        (&["-r", "2", "--fault", "0.0:kill@0.2"], (0, 0)),
        (&["-r", "2", "--fault", "0.0:kill@0.4"], (0, 0)),
        (&["-r", "2", "--fault", "0.0:kill@0.6"], (0, 0)),
        (&["-r", "2", "--fault", "0.0:kill@0.8"], (0, 0)),
        (&["-r", "2", "--fault", "0.0:kill@0.25"], (0, 0)),
        (&["-r", "2", "--fault", "0.0:kill@0.45"], (0, 0)),
    ];
    for (i, (extra, (rank, replica))) in cases.iter().chain(more).enumerate() {
        if i >= cases.len() && fetched > 0 {
            break;
        }
        let mut args = vec!["-n", "4", "-x", log];
        args.extend_from_slice(extra);
        let (r, got) = collective_run(&args, &exe);
        assert!(
            got == expected,
            "{args:?}: io.dat differs from the failure-free run's ({} bytes, {} expected)\n{}",
            got.len(),
            expected.len(),
            r.stderr
        );
        if r.state(*rank, *replica) == "finished" {
            continue; // the kill came after the replica finished: the file alone is checked
        }
        fetched += usize::from(r.stderr.contains("fetching the"));
    }
    assert!(
        fetched > 0,
        "no follower took over in the middle of a write"
    );
}

/// The blocks a rank sends an aggregator from its buffer in a collective write are lent
/// to the transport for the length of the call, not copied into its sender log, at
/// `-r 2` with regeneration too (docs/FILES.md, "Writes without their bytes"): the
/// counter `unlogged` counts them (a build that logs them, as every message is where
/// replicas regenerate from their siblings' logs, counts none). A new incarnation of
/// the aggregator's follower, replaying from the start, skips the blocks of the writes
/// its writer reported applied (the senders kept none of them) and catches up; the
/// writer killed, the follower fetches the blocks its writer had not reported from
/// senders still in the call; a sender killed, its new incarnation replays. Each file is
/// the failure-free run's (the program rewrites its buffer after each call).
#[test]
fn collective_write_blocks_are_lent_and_replays_skip_them() {
    let build = TempDir::new("io-build");
    let exe = compile_c(&build, "io_collective");
    let prog = ["40", "20", "1024"];
    let (_, expected) = collective_run_with(&["-n", "4", "-r", "1"], &exe, &prog);
    assert_eq!(expected.len(), 40 * 64 * 4096 * 4);
    let cases: &[Case] = &[
        (&["-r", "2"], None),
        (&["-r", "2", "--fault", "0.1:kill@0.4"], Some((0, 1))),
        (&["-r", "2", "--fault", "0.0:kill@0.5"], Some((0, 0))),
        (&["-r", "2", "--fault", "2.0:kill@0.5"], Some((2, 0))),
        (
            &[
                "-r",
                "3",
                "--fault",
                "0.0:kill@0.3",
                "--fault",
                "0.1:kill@0.6",
            ],
            Some((0, 1)),
        ),
    ];
    for (extra, hit) in cases {
        // The end of a call waits for its blocks' confirmations for as long as this (a
        // second) instead of 10 ms: a loaded machine's slow report does not copy them all.
        let mut args = vec!["-n", "4", "-x", "VOLPEX_CONFIRM_WAIT_US=1000000"];
        args.extend_from_slice(extra);
        let (r, got) = collective_run_with(&args, &exe, &prog);
        assert!(
            got == expected,
            "{args:?}: io.dat differs from the failure-free run's ({} bytes, {} expected)\n{}",
            got.len(),
            expected.len(),
            r.stderr
        );
        let unlogged = r.counter("unlogged");
        assert!(unlogged > 0, "{args:?}: no block was lent\n{}", r.stderr);
        assert!(
            !r.stderr.contains("cannot be regenerated"),
            "{args:?}\n{}",
            r.stderr
        );
        if let Some((rank, replica)) = hit {
            if r.state(*rank, *replica) == "finished" && !r.killed(*rank, *replica) {
                continue; // the kill came after the replica finished
            }
            let new_one = format!("rank {rank} replica {replica}: incarnation ");
            assert!(
                r.stderr
                    .lines()
                    .any(|l| l.contains(&new_one) && l.contains(" caught up in ")),
                "{args:?}: the killed replica's new incarnation did not catch up\n{}",
                r.stderr
            );
        }
    }
}

/// The shared file pointer when a rank's leader replica dies right after moving it,
/// before its siblings learnt where (`--fault 1.0:exit@choices=N`, each of rank 1's
/// first choices in turn: the open's, then its moves and reads of the pointer): the next
/// leader answers the recorded position instead of moving the pointer again, so every
/// rank sees the pointer where the failure-free run has it and the file has no hole
/// (`tests/c/io_shared.c` checks both; once, at a load of 60, a storm of fences ended
/// leaders in that moment and `io.c` found the pointer past its place).
#[test]
fn a_leader_dying_after_moving_the_shared_pointer_does_not_move_it_twice() {
    let build = TempDir::new("io-build");
    let exe = compile_c(&build, "io_shared");
    let shared_run = |args: &[&str]| {
        let dir = TempDir::new("io-shared");
        let d = dir.0.to_string_lossy().into_owned();
        let r = run(args, &exe, &[&d, "3"], DEADLINE);
        r.assert_no_leftovers();
        let line = first_line(r.ok(), "io_shared:");
        let names = entries(&dir.0);
        assert_eq!(
            names,
            ["shared.dat"],
            "{args:?}: the directory\n{}",
            r.stderr
        );
        let bytes = std::fs::read(dir.0.join("shared.dat")).expect("read shared.dat");
        (r, line, bytes)
    };
    let (_, line, bytes) = shared_run(&["-n", "2", "-r", "1"]);
    assert_eq!(line, "io_shared: ok 9");
    // A leader fenced before its Nth choice (a very loaded machine) makes no fault:
    // most runs must have had theirs.
    let mut fired = 0;
    for n in 1..=6 {
        let fault = format!("1.0:exit@choices={n}");
        let args = ["-n", "2", "-r", "2", "--fault", fault.as_str()];
        let (r, got_line, got) = shared_run(&args);
        assert_eq!(got_line, line, "{args:?}\n{}", r.stderr);
        assert!(got == bytes, "{args:?}: shared.dat differs\n{}", r.stderr);
        fired += usize::from(r.stderr.contains(&format!("exits after choice {n}")));
    }
    assert!(fired >= 4, "the fault fired in {fired} runs of 6");
}

/// The MPI-IO calls of libvolpexmpi reach the file layer (the library's own `pwrite`s go
/// through the layer's symbols): a replica that writes other bytes than its sibling is
/// caught at the file by `VOLPEX_VERIFY_OUTPUT=1`; without it the job ends well and the
/// writer's bytes are written.
#[test]
fn replicas_that_write_different_bytes_through_mpi_io_are_caught() {
    let build = TempDir::new("io-build");
    let exe = compile_c(&build, "io");
    let dir = TempDir::new("io-diverge");
    let d = dir.0.to_string_lossy().into_owned();
    let r = run(
        &["-n", "2", "-r", "2", "-x", "VOLPEX_VERIFY_OUTPUT=1"],
        &exe,
        &[&d, "2", "0", "diverge"],
        DEADLINE,
    );
    r.assert_no_leftovers();
    assert_eq!(r.code, Some(74), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("output verification failed: rank 0")
            && r.stderr.contains("io.dat at offset 0"),
        "{}",
        r.stderr
    );
}

/// A full disk: the write's ENOSPC reaches every rank's program as MPI_ERR_NO_SPACE (36),
/// at the write or at MPI_File_close, at `-r 1` and `-r 2`, and the job fails naming the
/// file (exit 74).
#[test]
#[cfg_attr(
    not(feature = "root-tests"),
    ignore = "needs root: mounts a small tmpfs"
)]
fn a_full_disk_is_mpi_err_no_space() {
    let build = TempDir::new("io-build");
    let exe = compile_c(&build, "io_full");
    for r in ["1", "2"] {
        let m = Mount::tmpfs("size=64k");
        let dir = m.0 .0.to_string_lossy().into_owned();
        let run = run(&["-n", "2", "-r", r], &exe, &[&dir, "102400"], DEADLINE);
        run.assert_no_leftovers();
        assert_eq!(run.code, Some(74), "-r {r}: {}\n{}", run.stdout, run.stderr);
        for rank in 0..2 {
            let line = run
                .stdout
                .lines()
                .find(|l| l.starts_with(&format!("rank {rank} write class")))
                .unwrap_or_else(|| panic!("-r {r}: no line of rank {rank} in\n{}", run.stdout));
            assert!(
                line.contains("class 36"),
                "-r {r}: {line:?} has no MPI_ERR_NO_SPACE"
            );
        }
        assert!(
            run.stderr.contains("full.dat") && run.stderr.contains("ENOSPC"),
            "-r {r}: {}",
            run.stderr
        );
    }
}

/// On several hosts sharing the file system (the test hosts see the machine's, as hosts
/// see an NFS export or a bind mount; docs/FILES.md, "Several hosts"): three ranks of two
/// replicas over three hosts, two slots each, rank 0's writer killed mid-run: the file is
/// the failure-free run's.
#[test]
#[cfg_attr(
    not(feature = "root-tests"),
    ignore = "needs root: test hosts in network namespaces"
)]
fn mpi_io_files_on_several_hosts_sharing_the_file_system() {
    #[cfg(feature = "root-tests")]
    {
        let build = TempDir::new("io-build");
        let exe = compile_c(&build, "io");
        let (_, line, bytes) = io_run(&["-n", "3", "-r", "1"], &exe, "io:");
        let net = volpex_tests::testhosts::TestNet::new(3);
        let dir = TempDir::new("io-hosts");
        let d = dir.0.to_string_lossy().into_owned();
        let la = ["-n", "3", "-r", "2", "--fault", "0.0:kill@0.5"];
        let r = net
            .spawn_job(&[], &la, &exe, &[&d, ROUNDS, WORK_MS])
            .wait(DEADLINE);
        r.assert_no_leftovers();
        assert_eq!(first_line(r.ok(), "io:"), line, "{}", r.stderr);
        let got = std::fs::read(dir.0.join("io.dat")).expect("read io.dat");
        assert!(got == bytes, "io.dat differs on hosts\n{}", r.stderr);
        assert_ne!(r.state(0, 0), "finished", "{}", r.stderr);
    }
}

/// The same on several hosts sharing the file system (docs/FILES.md, "Several hosts"):
/// the aggregator's follower, killed and regenerated on another host, replays the lent
/// collective writes and reads its own file back; the bytes of the writes it made without
/// them come from the shared file system, where its writer on another host applied them.
/// Four ranks of two replicas on four hosts of two slots, a fifth host spare for the new
/// incarnation; every file is the failure-free run's.
#[test]
#[cfg_attr(
    not(feature = "root-tests"),
    ignore = "needs root: test hosts in network namespaces"
)]
fn a_replay_on_another_host_reads_its_own_files_back() {
    #[cfg(feature = "root-tests")]
    {
        let build = TempDir::new("io-build");
        let exe = compile_c(&build, "io_collective");
        let prog = ["60", "60", "1024", "1"];
        let (_, expected) = collective_files(&["-n", "4", "-r", "1"], &exe, &prog);
        let net = volpex_tests::testhosts::TestNet::new(5);
        let dir = TempDir::new("io-coll-hosts");
        let d = dir.0.to_string_lossy().into_owned();
        let mut prog_args = vec![d.as_str()];
        prog_args.extend_from_slice(&prog);
        // Concentrated: h0 to h3 hold the job, h4 is the spare. The kill comes after
        // every host's agent started (over ssh, about 2 s).
        let la = [
            "--map",
            "concentrate",
            "-n",
            "4",
            "-r",
            "2",
            "-x",
            "VOLPEX_LOG=warn",
            "--fault",
            "0.1:kill@3",
        ];
        let r = net
            .spawn_job(&[("VOLPEX_LOG", "volpexrun=info")], &la, &exe, &prog_args)
            .wait(DEADLINE);
        let (r, got) = collective_done(r, &dir.0);
        assert_replayed_files("on hosts", &r, &expected, &got);
        assert_ne!(
            r.state(0, 1),
            "finished",
            "the kill came late\n{}",
            r.stderr
        );
        assert!(
            r.stderr.contains("rank 0 replica 1: incarnation 1"),
            "no new incarnation of the follower\n{}",
            r.stderr
        );
    }
}

/// The official NPB 3.4 BT with its MPI-IO subtype (`SUBTYPE=full`: collective writes
/// of the solution through a view every 5 steps, read back and checked at the end),
/// unmodified, class W at `-n 4`: it verifies at `-r 1`, and at `-r 2` with rank 0's
/// writer replica and another replica killed mid-run its output file `btio.full.out` is
/// the failure-free run's, byte for byte. Needs the sources (see
/// `volpex_tests::prerequisite`).
#[test]
fn official_npb_bt_io_verifies_and_writes_its_file_once() {
    let npb = volpex_tests::official_npb();
    let sources = format!("the official NPB sources ({})", npb.display());
    if !volpex_tests::prerequisite(npb.join("BT/full_mpiio.f").is_file(), &sources) {
        return;
    }
    let src = TempDir::new("npb-btio");
    volpex_tests::abi::official_npb_copy(&npb, &src);
    let out = std::process::Command::new("make")
        .current_dir(&src.0)
        .args(["bt", "CLASS=W", "NPROCS=4", "SUBTYPE=full"])
        .output()
        .expect("run make");
    assert!(
        out.status.success(),
        "make bt SUBTYPE=full:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = src.0.join("bin/bt.W.x.mpi_io_full");
    let bt = |args: &[&str]| {
        let dir = TempDir::new("npb-btio-run");
        // In its own directory (`env -C`): BT writes btio.full.out where it runs.
        let d = dir.0.to_string_lossy().into_owned();
        let r = volpex_tests::spawn_with(&["env", "-C", &d], &[], args, &exe, &[]).wait(DEADLINE);
        r.assert_no_leftovers();
        assert!(
            r.ok()
                .contains("Verification    =               SUCCESSFUL"),
            "{args:?}:\n{}",
            r.stdout
        );
        let file = std::fs::read(dir.0.join("btio.full.out")).expect("read btio.full.out");
        (r, file)
    };
    let (_, reference) = bt(&["-n", "4", "-r", "1"]);
    let (r, file) = bt(&[
        "-n",
        "4",
        "-r",
        "2",
        "--fault",
        "0.0:kill@0.4",
        "--fault",
        "2.1:kill@0.3",
    ]);
    assert!(
        file == reference,
        "btio.full.out differs from the failure-free run's\n{}",
        r.stderr
    );
    assert_ne!(
        r.state(0, 0),
        "finished",
        "the kill came late\n{}",
        r.stderr
    );
}

/// A new incarnation of the aggregator's follower replays the collective writes, whose
/// blocks were lent (no sender kept them: it makes the writes without their bytes), and
/// after each one the stdio file of its own it rewrote and reads back (`io_collective`
/// with PRIVATE 1): it keeps what it writes in the replay, the collective writes' bytes
/// too (its own pieces, the others' as the file system has them), so it reads its file
/// as it wrote it then, not as its writer rewrote it since, and catches up instead of
/// retiring (docs/FILES.md, "Writes without their bytes"). Every file is the failure-free
/// run's.
#[test]
fn a_replay_through_lent_collective_writes_reads_its_own_files_back() {
    let build = TempDir::new("io-build");
    let exe = compile_c(&build, "io_collective");
    let prog = ["30", "20", "1024", "1"];
    let (_, expected) = collective_files(&["-n", "4", "-r", "1"], &exe, &prog);
    let names: Vec<&str> = expected.keys().map(String::as_str).collect();
    assert_eq!(names, ["io.dat", "priv.0", "priv.1", "priv.2", "priv.3"]);
    let mut caught_up = 0;
    for fault in ["0.1:kill@0.2", "0.1:kill@0.35", "0.1:kill@0.5"] {
        let args = [
            "-n",
            "4",
            "-r",
            "2",
            "-x",
            "VOLPEX_LOG=warn",
            "--fault",
            fault,
        ];
        let (r, got) = collective_files(&args, &exe, &prog);
        assert_replayed_files(&format!("{args:?}"), &r, &expected, &got);
        // Whether the new incarnation catches up before the job ends depends on the
        // machine's pace; it must in one run at least.
        caught_up +=
            usize::from(r.stderr.lines().any(|l| {
                l.contains("rank 0 replica 1: incarnation ") && l.contains(" caught up in ")
            }));
    }
    assert!(
        caught_up > 0,
        "no new incarnation of the follower caught up"
    );
}
