/* Fuzz target: the --if condition parser (trace/trace-cond.h), and the
 * evaluation of what it accepts over a call record. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "trace/trace-cond.h"
#include "trace/trace-event.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct trace_cond *c;
	struct trace_cond_error e;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	if (trace_cond_parse(text, &c, &e) == 0) {
		struct trace_record r;
		memset(&r, 0, sizeof(r));
		r.kind = TRACE_CALL;
		r.nargs = 2;
		trace_copy_str(r.args[0].name, sizeof(r.args[0].name), "n");
		r.args[0].kind = TRACE_ARG_INT;
		r.args[0].value = 42;
		trace_copy_str(r.args[1].name, sizeof(r.args[1].name), "name");
		r.args[1].kind = TRACE_ARG_STR;
		trace_copy_str(r.args[1].str, sizeof(r.args[1].str), "client-7");
		(void)trace_cond_eval(c, trace_record_lookup, &r);
		trace_cond_free(c);
	}
	free(text);
	return 0;
}
