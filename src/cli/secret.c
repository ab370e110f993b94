/*
 * Secrets read from files (see secret.h).
 */
#include "cli/secret.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/usage.h"

void secret_read(const char *file, const char *option, char *buf, size_t len)
{
	struct stat st;
	FILE *fp = fopen(file, "re");

	if (!fp)
		die("cannot read %s of %s: %s", file, option, strerror(errno));
	if (fstat(fileno(fp), &st) == 0 && (st.st_mode & 0077))
		warning("%s (%s) can be read by other users: 'chmod 600 %s'", file, option, file);
	if (!fgets(buf, (int)len, fp)) {
		fclose(fp);
		die("%s of %s is empty: put the secret on its first line", file, option);
	}
	fclose(fp);
	size_t n = strcspn(buf, "\r\n");
	if (n == len - 1 && buf[n] == '\0')
		die("the first line of %s (%s) is longer than %zu bytes", file, option, len - 2);
	buf[n] = '\0';
	if (!n)
		die("%s of %s is empty: put the secret on its first line", file, option);
}
