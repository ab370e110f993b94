/*
 * The fleet store a command reads (see fleet-open.h).
 */
#include "cli/fleet-open.h"

#include <errno.h>
#include <string.h>

#include "cli/builtin.h"
#include "cli/secret.h"
#include "cli/usage.h"

struct clickhouse *fleet_open(const char *cmd, const char *url, const char *password_file)
{
	struct clickhouse *ch;
	const char *why;
	int err = clickhouse_open(url, &ch, &why);

	if (err == -EINVAL)
		usage_die(cmd, "--clickhouse %s, not '%s'", why, url);
	if (err)
		die("out of memory");
	if (password_file) {
		char password[256];
		secret_read(password_file, "--clickhouse-password", password, sizeof(password));
		if (clickhouse_set_password(ch, password) < 0)
			die("the password of %s is too long", password_file);
		explicit_bzero(password, sizeof(password));
	} else if (clickhouse_url_password(ch)) {
		warning("the password in --clickhouse can be read by every user of this "
			"machine (ps): put it in a file, and give --clickhouse-password FILE");
	}
	return ch;
}
