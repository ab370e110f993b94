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
	char buf[64];
	unsigned mask;

	assert_int_equal(scope_needed("record"), SCOPE_READ);
	assert_int_equal(scope_needed("top"), SCOPE_READ);
	assert_int_equal(scope_needed("trace"), SCOPE_TRACE);
	assert_int_equal(scope_needed("capture"), SCOPE_TRACE);
	assert_int_equal(scope_needed("patch"), SCOPE_PATCH);
	assert_int_equal(scope_needed("agent"), 0);
	assert_int_equal(scope_needed("certs"), 0);
	/* exec and admin are scopes of their own, named and parsed. */
	assert_int_equal(scope_parse("read,exec,admin", &mask), 0);
	assert_int_equal(mask, SCOPE_READ | SCOPE_EXEC | SCOPE_ADMIN);
	assert_string_equal(scope_names(SCOPE_ALL, buf, sizeof(buf)),
			    "read,trace,patch,exec,admin");
	assert_int_equal(scope_parse("read,root", &mask), -EINVAL);
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
	assert_int_equal(scopes_of(&s, "ops", 0), SCOPE_READ | SCOPE_TRACE | SCOPE_PATCH);
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
