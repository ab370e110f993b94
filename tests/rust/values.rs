// A Rust target for the tests that recce trace reads a &str (a pointer
// and a length in two registers) as its text, and shows an argument the
// compiler dropped as unknown: `len_only` uses only its string's length,
// so LLVM passes that alone, in the first register, and the n after it
// moves up one.
//
//     values N GO_FILE
//
// Prints "rust: ready", waits until GO_FILE exists, then for i = 0..N-1
// calls add_file(NAMES[i % 3], i), len_only(NAMES[i % 3], i), side(i)
// and pick(i), which returns NAMES[i % 3] as a &str (a pointer and a
// length, returned in rax and rdx), prints "rust: SUM" and exits.
use std::hint::black_box;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::sleep;
use std::time::Duration;

const NAMES: [&str; 3] = ["a.txt", "bb.log", "config.toml"];

#[inline(never)]
fn add_file(path: &str, n: u64) -> u64 {
    black_box(path.bytes().map(|b| b as u64).sum::<u64>() + n)
}

#[inline(never)]
fn len_only(path: &str, n: u64) -> u64 {
    black_box(path.len() as u64 * 1000 + n)
}

static SEEN: AtomicU64 = AtomicU64::new(0);

// Returns i * 7, which no caller uses: LLVM drops the result (rax holds
// what it happens to hold at the return) and marks the function nocall.
#[inline(never)]
fn side(i: u64) -> u64 {
    // black_box first: a lock-prefixed first instruction takes no probe.
    SEEN.fetch_add(black_box(i), Ordering::Relaxed);
    i * 7
}

// Exported, so LLVM keeps its calling convention (not nocall).
#[inline(never)]
#[no_mangle]
pub fn pick(i: u64) -> &'static str {
    NAMES[(black_box(i) % 3) as usize]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args[1].parse().unwrap();
    println!("rust: ready");
    while !Path::new(&args[2]).exists() {
        sleep(Duration::from_millis(1));
    }
    let mut t = 0;
    for i in 0..n {
        t += add_file(NAMES[(i % 3) as usize], i) + len_only(NAMES[(i % 3) as usize], i);
        side(i);
        t += pick(i).len() as u64;
        sleep(Duration::from_millis(1));
    }
    println!("rust: {}", t);
}
