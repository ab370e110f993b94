/* Fuzz target: what the agent reads of who may do what (remote/scopes.h):
 * grants as --allow, --deny and --scopes give them, one a NUL-separated
 * word of the input, then the scopes of clients named by the words, and
 * the names of each mask; nothing a grant file holds may crash the agent
 * or grant more than it says. */
#include <string.h>

#include "fuzz.h"
#include "remote/scopes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), names[64];
	struct scopes s = {0};

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (size_t at = 0; at <= size; at += strlen(text + at) + 1) {
		unsigned mask;
		if (scopes_add(&s, text + at) == 0 && strchr(text + at, '='))
			(void)scope_parse(strchr(text + at, '=') + 1, &mask);
		if (scope_needed(text + at) & ~SCOPE_ALL)
			abort(); /* a scope that is none of the five */
	}
	for (size_t at = 0; at <= size; at += strlen(text + at) + 1) {
		unsigned have = scopes_of(&s, text + at, (uid_t)at);
		if (have & ~SCOPE_ALL)
			abort();
		scope_names(have, names, sizeof(names));
	}
	scopes_release(&s);
	free(text);
	return 0;
}
