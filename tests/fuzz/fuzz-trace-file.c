/* Fuzz target: the trace-file reader (trace/trace-file.h), every record
 * it accepts printed in each format, as replay would. The reader checks a
 * CRC on the header and on every block of records (format 2) or record
 * (format 1), and format 3 on the host record after the header, which
 * random mutations never get right: for inputs of even
 * length the target writes the right CRCs in first, so that the fuzzer
 * reaches the packed records behind them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz.h"
#include "trace/trace-event.h"
#include "trace/trace-file.h"

#define HEADER_CRC_AT  44 /* struct file_header: the CRC of the bytes before it */
#define VERSION_AT     8
#define RECORD_SIZE_AT 12
#define META_SIZE      152 /* format 3: trace-file.c's struct file_meta after the header */
#define META_CRC_AT    148
#define BLOCK_HEADER   24 /* trace-file.c's struct block_header */
#define BLOCK_CRC_AT   20

static int show(const struct trace_record *r, void *ctx)
{
	FILE *out = ctx;

	for (int f = TRACE_FORMAT_TEXT; f <= TRACE_FORMAT_CHROME; f++)
		trace_record_print(r, (enum trace_format)f, 0, out);
	return 0;
}

static void put_crc(uint8_t *at, const uint8_t *from, size_t n)
{
	uint32_t crc = (uint32_t)crc32(0L, from, (uInt)n);
	memcpy(at, &crc, 4);
}

static void fix_crcs(uint8_t *d, size_t size)
{
	uint32_t rsize, bytes;
	uint16_t version;
	size_t start = TRACE_FILE_HEADER_SIZE;

	if (size < TRACE_FILE_HEADER_SIZE)
		return;
	put_crc(d + HEADER_CRC_AT, d, HEADER_CRC_AT);
	memcpy(&rsize, d + RECORD_SIZE_AT, 4);
	memcpy(&version, d + VERSION_AT, 2);
	if (version >= 3) {
		if (size < start + META_SIZE)
			return;
		put_crc(d + start + META_CRC_AT, d + start, META_CRC_AT);
		start += META_SIZE;
	}
	if (rsize == 0) {
		/* Blocks: each header's CRC runs on over its records. */
		for (size_t at = start; at + BLOCK_HEADER <= size; at += BLOCK_HEADER + bytes) {
			memcpy(&bytes, d + at + 4, 4);
			if (bytes > size - at - BLOCK_HEADER)
				return;
			uint32_t crc = (uint32_t)crc32(0L, d + at, BLOCK_CRC_AT);
			crc = (uint32_t)crc32(crc, d + at + BLOCK_HEADER, bytes);
			memcpy(d + at + BLOCK_CRC_AT, &crc, 4);
		}
		return;
	}
	if (rsize < TRACE_RECORD_SIZE || rsize > (1u << 20))
		return;
	for (size_t at = TRACE_FILE_HEADER_SIZE; at + TRACE_RECORD_SIZE <= size; at += rsize)
		put_crc(d + at, d + at + 4, TRACE_RECORD_SIZE - 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	struct trace_file_info info;
	uint8_t *copy = malloc(size ? size : 1);
	FILE *out = fopen("/dev/null", "w");

	if (copy && out) {
		memcpy(copy, data, size);
		if (size % 2 == 0)
			fix_crcs(copy, size);
		int fd = fuzz_file(copy, size, path);
		if (fd >= 0) {
			trace_file_read(path, show, out, &info);
			fuzz_file_done(fd, path);
		}
	}
	if (out)
		fclose(out);
	free(copy);
	return 0;
}
