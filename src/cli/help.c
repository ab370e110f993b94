/*
 * Looks up and prints the compiled-in help pages.
 */
#include "cli/help.h"

#include <string.h>

const char *help_page(const char *name)
{
	for (const struct help_page *p = help_pages; p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p->text;
	return NULL;
}

int help_show(const char *name, FILE *out)
{
	const char *text = help_page(name);

	if (!text)
		return -1;
	fputs(text, out);
	return 0;
}
