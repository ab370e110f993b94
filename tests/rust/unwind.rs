// A Rust target for the unwinder's tests, built as a release is (rustc -O:
// no frame pointers, CFI only): main calls outer, which catches the
// unwind of middle and inner, and every seventh inner panics, so that a
// panic is always soon in flight (libgcc's unwinder under Rust's frames).
//
//     unwind SECONDS
//
// Runs for SECONDS of wall time (default 1), prints
// "unwind: calls=N panicked=K" and exits 0.
use std::hint::black_box;
use std::panic;
use std::time::Instant;

#[inline(never)]
fn inner(i: u64) -> u64 {
    if i % 7 == 0 {
        panic!("seven");
    }
    let mut s = 0u64;
    for k in 0..200 {
        s = s.wrapping_add(black_box(k * i));
    }
    s
}

#[inline(never)]
fn middle(i: u64) -> u64 {
    black_box(inner(black_box(i))) + 1
}

#[inline(never)]
fn outer(i: u64) -> Option<u64> {
    panic::catch_unwind(|| middle(i)).ok()
}

fn main() {
    // The panics are the point: none is printed.
    panic::set_hook(Box::new(|_| {}));
    let secs: f64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1.0);
    let start = Instant::now();
    let (mut calls, mut panicked) = (0u64, 0u64);
    while start.elapsed().as_secs_f64() < secs {
        for _ in 0..1000 {
            match outer(calls) {
                Some(v) => {
                    black_box(v);
                }
                None => panicked += 1,
            }
            calls += 1;
        }
    }
    println!("unwind: calls={} panicked={}", calls, panicked);
}
