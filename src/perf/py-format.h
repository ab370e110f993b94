/*
 * What the Python frame program (bpf/py.bpf.c) and user space
 * (py-bpf.c) agree on: where a CPython keeps a thread's frames (one
 * layout per process, filled by user space from proc/py-frames.c), and
 * the record the program writes at every sample of a thread of
 * such a process. Shared by both sides, so this header includes nothing
 * a BPF compilation lacks.
 */
#ifndef RECCE_PERF_PY_FORMAT_H
#define RECCE_PERF_PY_FORMAT_H

#include <linux/types.h>

#define PY_BPF_FRAMES	  128 /* frames read per sample (a power of two); deeper is cut */
#define PY_BPF_THREADS	  256 /* thread states looked through for a thread not met yet */
#define PY_BPF_PROCS	  1024
#define PY_BPF_TIDS	  65536
#define PY_BPF_RING_BYTES (4u << 20)
#define PY_BPF_FRAME_BYTES 128 /* of a frame, read at once: its fields are in the first ones */

/* Byte offsets into one CPython's structures, and where its runtime is. */
struct py_bpf_layout {
	__u64 runtime;		   /* the address of _PyRuntime */
	__u32 rt_interp_head;	   /* _PyRuntime.interpreters.head */
	__u32 interp_threads_head; /* PyInterpreterState.threads.head */
	__u32 ts_next, ts_native_tid;
	__s32 ts_cframe; /* PyThreadState.cframe; -1: the frame is in the state */
	__u32 ts_frame;	 /* the current frame in cframe (or the state) */
	__u32 fr_code, fr_func, fr_previous, fr_instr, fr_owner;
	__s32 fr_is_entry;   /* 3.11's flag; -1 when a shim frame marks an entry */
	__u32 fr_globals;    /* the frame's globals; 0: not known */
	__u32 fr_size;	     /* bytes of a frame to its last field above, read at once */
	__u32 func_module;   /* PyFunctionObject.func_module */
	__u32 code_qualname; /* PyCodeObject.co_qualname */
};

/* The owner byte of a frame (FRAME_OWNED_BY_*), the same in 3.11 to 3.13. */
#define PY_OWNER_GENERATOR 1
#define PY_OWNER_CSTACK	   3 /* 3.12 on: the shim frame of a C call of the interpreter */

/* Bits of a frame's code word (code objects are 8-aligned). */
#define PY_FRAME_ENTRY 1ull /* the outermost frame of one C call of the interpreter */
#define PY_FRAME_GEN   2ull /* owned by a generator or coroutine */
#define PY_FRAME_BITS  7ull

/* A record's module word with this bit set is the frame's globals dict,
 * not a str: its function has no __module__ (module code in 3.11). */
#define PY_MODULE_GLOBALS 1ull

/* The record's flags. */
#define PY_REC_CUT	 1 /* the chain went on past PY_BPF_FRAMES, or a read failed */
#define PY_REC_NO_THREAD 2 /* the thread has no thread state (yet), or it could not be read */

struct py_bpf_record {
	/* bpf_ktime_get_ns() (CLOCK_MONOTONIC, as the samples') as the
	 * program starts and as it ends: perf takes a sample's time before
	 * the one or after the other (profile/py-match.h). */
	__u64 time, time_end;
	__u32 pid, tid;
	__u32 n; /* frames read, innermost first */
	__u32 flags;
	/* Code object | PY_FRAME_*, instruction pointer, the function's
	 * __module__ (0 when not read; or globals | PY_MODULE_GLOBALS) and
	 * the code's co_qualname, read at the sample: a function of a
	 * comprehension is freed when it ends. */
	__u64 frames[PY_BPF_FRAMES][4];
};

#endif
