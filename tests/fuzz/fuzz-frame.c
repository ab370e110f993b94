/* Fuzz target: the agent protocol's frame decoder (remote/frame.h), over
 * a byte stream holding any number of frames, as a connection delivers
 * them; what decodes is encoded again. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "remote/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;

	while (off < size) {
		Envelope *e = NULL;
		size_t used = 0;
		int rc = frame_decode(data + off, size - off, &used, &e);
		if (rc <= 0)
			break;
		uint8_t *out;
		size_t len;
		if (frame_encode(e, &out, &len) == 0)
			free(out);
		frame_free(e);
		off += used;
	}
	return 0;
}
