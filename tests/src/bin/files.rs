//! Test program: files a Rust program writes with `std::fs`, under replication. Each
//! must come out as the failure-free run writes it, and every replica must read back
//! what it wrote. In `--dir` each rank writes, one step at a time (an all-reduce per
//! step keeps the ranks in step):
//!   log-R.txt     `File::create` behind a `BufWriter`, one line per step, flushed
//!   data-R.bin    one read-write `File`: 64-byte records appended (seek to the end), a
//!                 16-byte header rewritten at offset 0 (`write_all_at`), both read back
//!   append-R.txt  an existing file (the test makes it), opened with `append(true)`
//!                 every step
//!   state-R.txt   saved whole every step (`fs::write` of a temporary, `fs::rename`
//!                 over it) and read back with `fs::read_to_string`
//!   cut-R.bin     cut with `set_len` every 5 steps, its length checked (`metadata`)
//!   gone-R.txt    written, then removed at the end
//! It prints a checksum of all it read. Arguments: `--dir DIR --steps N --work-ms MS`;
//! `--diverge`: replica 1 of rank 0 writes `STEP` for `step` in its log's tenth line (a
//! replica gone wrong, for `VOLPEX_VERIFY_OUTPUT=1` to catch).

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::Duration;

use volpex::SystemOperation;
use volpex_tests::check;

fn mix(h: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(h, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(1_099_511_628_211)
    })
}

fn record(rank: i32, step: usize) -> Vec<u8> {
    (0..64)
        .map(|i| (rank as usize * 31 + step * 7 + i) as u8)
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let dir = PathBuf::from(arg("--dir").ok_or("--dir DIR is required")?);
    let steps: usize = arg("--steps").map_or(Ok(40), |v| v.parse())?;
    let work_ms: u64 = arg("--work-ms").map_or(Ok(0), |v| v.parse())?;
    volpex::log_to_stderr();
    let universe = volpex::initialize()?;
    let world = universe.world();
    let rank = world.rank();
    let diverge = args.iter().any(|a| a == "--diverge") && rank == 0 && universe.replica() == 1;
    let p = |stem: &str| dir.join(format!("{stem}-{rank}"));
    let (log_p, data_p, app_p) = (p("log").with_extension("txt"), p("data"), p("append"));
    let data_p = data_p.with_extension("bin");
    let app_p = app_p.with_extension("txt");
    let (state_p, tmp_p) = (
        p("state").with_extension("txt"),
        p("state").with_extension("tmp"),
    );
    let (cut_p, gone_p) = (
        p("cut").with_extension("bin"),
        p("gone").with_extension("txt"),
    );
    let ok = |cond: bool, what: &str| check("files", cond, &format!("rank {rank}: {what}"));

    let mut log = BufWriter::new(File::create(&log_p)?);
    let mut data = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&data_p)?;
    data.write_all(&format!("HDR step={:06}\n", 0).into_bytes())?;
    fs::write(&gone_p, b"short-lived\n")?;
    let mut sum = 14_695_981_039_346_656_037u64;
    for step in 1..=steps {
        let mut all = 0i64;
        world.all_reduce_into(
            &(rank as i64 + step as i64),
            &mut all,
            SystemOperation::sum(),
        )?;
        let word = if diverge && step == 10 {
            "STEP"
        } else {
            "step"
        };
        writeln!(log, "rank {rank} {word} {step} all {all}")?;
        log.flush()?;

        let rec = record(rank, step);
        let end = data.seek(SeekFrom::End(0))?;
        ok(
            end == 16 + (step as u64 - 1) * 64,
            "data length before a record",
        );
        data.write_all(&rec)?;
        let hdr = format!("HDR step={step:06}\n").into_bytes();
        data.write_all_at(&hdr, 0)?;
        let mut back = [0u8; 64];
        data.read_exact_at(&mut back[..16], 0)?;
        ok(back[..16] == hdr[..], "the header read back");
        data.read_exact_at(&mut back, end)?;
        ok(back[..] == rec[..], "a record read back");
        sum = mix(sum, &back);

        let mut app = OpenOptions::new().append(true).open(&app_p)?;
        let line = format!("step {step} all {all}\n");
        app.write_all(line.as_bytes())?;
        drop(app);

        fs::write(&tmp_p, line.as_bytes())?;
        fs::rename(&tmp_p, &state_p)?;
        let got = fs::read_to_string(&state_p)?;
        ok(got == line, "the state read back");
        sum = mix(sum, got.as_bytes());

        if step % 5 == 0 {
            let mut cut = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&cut_p)?;
            let len = (step % 7 + 1) * 100;
            cut.set_len(0)?;
            cut.write_all_at(&vec![b'a' + (step % 26) as u8; len], 0)?;
            cut.set_len(len as u64 / 2)?;
            ok(cut.metadata()?.len() == len as u64 / 2, "the cut length");
            cut.seek(SeekFrom::Start(0))?;
            let mut buf = Vec::new();
            cut.read_to_end(&mut buf)?;
            ok(buf.len() == len / 2, "the cut file read back");
            sum = mix(sum, &buf);
        }
        std::thread::sleep(Duration::from_millis(work_ms));
    }
    log.into_inner()?.sync_all()?;
    data.sync_all()?;
    drop(data);
    // Everything written, read back through new files.
    let mut lines = 0;
    for l in BufReader::new(File::open(&log_p)?).lines() {
        lines += 1;
        sum = mix(sum, l?.as_bytes());
    }
    ok(lines == steps, "the log read back");
    let bytes = fs::read(&data_p)?;
    ok(bytes.len() == 16 + steps * 64, "the data read back");
    sum = mix(sum, &bytes);
    fs::remove_file(&gone_p)?;
    ok(!gone_p.exists(), "a removed file is gone");
    println!("files: rank {rank} steps {steps} sum {sum}");
    Ok(())
}
