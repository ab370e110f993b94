/*
 * Unit tests of the agent's scopes (remote/scopes.h): grants as people
 * write them, the exact client before the star, the defaults of local and
 * TLS clients, the scope each command needs, and grants from a file.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <cmocka.h>

#include "remote/scopes.h"

/* scope_needed() of a command and its arguments, NULL-terminated. */
static unsigned needed(const char *first, ...)
{
	char *argv[16];
	size_t n = 0;
	va_list ap;

	argv[n++] = (char *)first;
	va_start(ap, first);
	for (char *a; n < 16 && (a = va_arg(ap, char *));)
		argv[n++] = a;
	va_end(ap);
	return scope_needed(n, argv);
}

static void test_grants(void **state)
{
	(void)state;
	struct scopes s = {0};
	char buf[32];

	assert_int_equal(scopes_of(&s, "alice", 0), SCOPE_READ);
	assert_int_equal(scopes_of(&s, "", 1000), SCOPE_ALL);
	assert_int_equal(scopes_add(&s, "cert:*=read,trace"), 0);
	assert_int_equal(scopes_add(&s, "cert:alice=patch,read"), 0);
	assert_int_equal(scopes_add(&s, "uid:1000=read"), 0);
	assert_int_equal(scopes_of(&s, "alice", 0), SCOPE_READ | SCOPE_PATCH);
	assert_int_equal(scopes_of(&s, "bob", 0), SCOPE_READ | SCOPE_TRACE);
	assert_int_equal(scopes_of(&s, "", 1000), SCOPE_READ);
	assert_int_equal(scopes_of(&s, "", 0), SCOPE_ALL);
	/* A later grant for the same client replaces the earlier one. */
	assert_int_equal(scopes_add(&s, "cert:alice=trace"), 0);
	assert_int_equal(scopes_of(&s, "alice", 0), SCOPE_TRACE);
	assert_string_equal(scope_names(SCOPE_READ | SCOPE_PATCH, buf, sizeof(buf)), "read,patch");
	assert_string_equal(scope_names(0, buf, sizeof(buf)), "none");

	assert_int_equal(scopes_add(&s, "alice=read"), -EINVAL);
	assert_int_equal(scopes_add(&s, "cert:alice=write"), -EINVAL);
	assert_int_equal(scopes_add(&s, "cert:alice="), -EINVAL);
	assert_int_equal(scopes_add(&s, "uid:12a=read"), -EINVAL);
	assert_int_equal(scopes_add(&s, "cert:=read"), -EINVAL);
	scopes_release(&s);
}

static void test_needed(void **state)
{
	(void)state;
	assert_int_equal(needed("record", NULL), SCOPE_READ);
	assert_int_equal(needed("top", NULL), SCOPE_READ);
	assert_int_equal(needed("trace", NULL), SCOPE_TRACE);
	assert_int_equal(needed("capture", NULL), SCOPE_TRACE);
	assert_int_equal(needed("patch", NULL), SCOPE_PATCH);
	assert_int_equal(needed("agent", NULL), 0);
	assert_int_equal(needed("certs", NULL), 0);
	/* Reading commands that probe a process when told to. */
	assert_int_equal(needed("tasks", "-p", "42", NULL), SCOPE_READ);
	assert_int_equal(needed("tasks", "--libuv", "-p", "42", NULL), SCOPE_TRACE);
	assert_int_equal(needed("record", "-p", "42", "-e", "alloc", NULL), SCOPE_TRACE);
	assert_int_equal(needed("record", "--event=alloc", NULL), SCOPE_TRACE);
	assert_int_equal(needed("record", "--event", "alloc", NULL), SCOPE_TRACE);
	assert_int_equal(needed("record", "-e", "offcpu", NULL), SCOPE_READ);
	/* A command's own arguments after "--" are its own. */
	assert_int_equal(needed("record", "--", "prog", "-e", "alloc", NULL), SCOPE_READ);
}

static void test_file(void **state)
{
	(void)state;
	char path[64];
	struct scopes s = {0};
	int line;

	snprintf(path, sizeof(path), "/tmp/recce-test-scopes.%d", (int)getpid());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("# grants\n\n  cert:ops=read,trace,patch  \nuid:*=read\n", f);
	fclose(f);
	assert_int_equal(scopes_load(&s, path, &line), 0);
	assert_int_equal(scopes_of(&s, "ops", 0), SCOPE_ALL);
	assert_int_equal(scopes_of(&s, "", 0), SCOPE_READ);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("cert:ops=read\ncert:eve=everything\n", f);
	fclose(f);
	assert_int_equal(scopes_load(&s, path, &line), -EINVAL);
	assert_int_equal(line, 2);
	unlink(path);
	assert_int_equal(scopes_load(&s, path, &line), -ENOENT);
	scopes_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grants),
		cmocka_unit_test(test_needed),
		cmocka_unit_test(test_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
