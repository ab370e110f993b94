/*
 * A program that poses as CPython 3.11 to a reader from outside, with
 * state that lies: it exports _PyRuntime, Py_Version (3.11.2) and
 * Py_Initialize as CPython does, and lays out, at 3.11's offsets, an
 * interpreter whose thread states and frames are wrong in the way MODE
 * says. recce dump must end, with what it could read and where it stopped,
 * and the target must run on.
 *
 *   fake-python MODE
 *
 * MODE ring: two thread states, each the other's next, the first with
 * this thread's id; three frames whose callers come back to the first,
 * each with a code object named "liar_N" in "fake.py" at line 7.
 * MODE self: a thread state that is its own next, a frame its own caller.
 * MODE wild: pointers to unmapped memory and lengths in the exabytes.
 *
 * Prints "fake-python: ready" and sleeps until killed.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((used, visibility("default"))) unsigned char _PyRuntime[4096];
__attribute__((used, visibility("default"))) const uint32_t Py_Version = 0x030b02f0;

__attribute__((noinline, used, visibility("default"))) void Py_Initialize(void)
{
	__asm__ volatile("");
}

static unsigned char interp[256], ts[2][512], cframe[32], frames[3][128], code[3][256];
static unsigned char strs[7][128], type_obj[64], lines[8];

static void put(unsigned char *at, uint64_t v)
{
	memcpy(at, &v, 8);
}

/* A compact ASCII str of CPython 3.11 (state: kind 1, compact, ascii,
 * ready; the text after the 48-byte header). */
static uint64_t str(int i, const char *text)
{
	uint32_t state = 1u << 2 | 1u << 5 | 1u << 6 | 1u << 7;

	put(strs[i] + 8, (uint64_t)(uintptr_t)type_obj);
	put(strs[i] + 16, strlen(text));
	memcpy(strs[i] + 32, &state, 4);
	memcpy(strs[i] + 48, text, strlen(text) + 1);
	return (uint64_t)(uintptr_t)strs[i];
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "ring";
	uint64_t tid = (uint64_t)syscall(SYS_gettid);
	uint64_t wild = 0x7fff00000000ULL; /* nothing is mapped there */

	Py_Initialize();
	put(_PyRuntime + 0x28, (uint64_t)(uintptr_t)interp);
	put(interp + 0x10, (uint64_t)(uintptr_t)ts[0]);
	put(ts[0] + 0xa0, tid);
	put(ts[0] + 0x38, (uint64_t)(uintptr_t)cframe);
	put(cframe + 8, (uint64_t)(uintptr_t)frames[0]);
	if (strcmp(mode, "ring") == 0) {
		put(ts[0] + 8, (uint64_t)(uintptr_t)ts[1]);
		put(ts[1] + 8, (uint64_t)(uintptr_t)ts[0]);
		put(ts[1] + 0xa0, tid + 1000000);
		put(ts[1] + 0x38, (uint64_t)(uintptr_t)cframe);
		/* One line-table entry: 8 code units, line unchanged. */
		lines[0] = 0x80 | 13 << 3 | 7;
		lines[1] = 0;
		put(strs[6] + 16, 2);
		memcpy(strs[6] + 32, lines, 2);
		for (int i = 0; i < 3; i++) {
			char name[16];
			snprintf(name, sizeof(name), "liar_%d", i);
			put(code[i] + 0x78, str(i, name));
			put(code[i] + 0x80, str(i, name));
			put(code[i] + 0x70, str(3 + i, "fake.py"));
			put(code[i] + 0x88, (uint64_t)(uintptr_t)strs[6]);
			int32_t first = 7;
			memcpy(code[i] + 0x48, &first, 4);
			put(frames[i] + 0x20, (uint64_t)(uintptr_t)code[i]);
			put(frames[i] + 0x38, (uint64_t)(uintptr_t)(code[i] + 0xb8 + 2));
			put(frames[i] + 0x30, (uint64_t)(uintptr_t)frames[(i + 1) % 3]);
		}
	} else if (strcmp(mode, "self") == 0) {
		put(ts[0] + 8, (uint64_t)(uintptr_t)ts[0]);
		put(frames[0] + 0x30, (uint64_t)(uintptr_t)frames[0]);
		put(frames[0] + 0x20, (uint64_t)(uintptr_t)code[0]);
		put(code[0] + 0x78, wild);
	} else {
		put(ts[0] + 8, wild);
		put(frames[0] + 0x20, wild);
		put(frames[0] + 0x30, wild + 4096);
		put(interp + 0x10, (uint64_t)(uintptr_t)ts[0]);
		put(code[0] + 0x78, (uint64_t)(uintptr_t)strs[0]);
		put(strs[0] + 16, UINT64_MAX / 2);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("fake-python: ready\n");
	for (;;)
		pause();
}
