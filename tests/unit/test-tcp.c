/*
 * Unit tests of TCP addresses as people write them (util/tcp.h): a
 * listener's bare word is a port, a client's a host; brackets around an
 * IPv6 address; what is left out takes the default; what does not fit is
 * refused. And a listener on port 0 says the port it got.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/tcp.h"

static void split_is(const char *spec, int bare_is_port, const char *host, const char *port)
{
	char h[64], p[16];

	assert_int_equal(tcp_split(spec, bare_is_port, "dh", "dp", h, sizeof(h), p, sizeof(p)), 0);
	assert_string_equal(h, host);
	assert_string_equal(p, port);
}

static void test_split(void **state)
{
	(void)state;
	split_is("web-3:7451", 0, "web-3", "7451");
	split_is("web-3", 0, "web-3", "dp");
	split_is("7450", 1, "dh", "7450");
	split_is(":7450", 1, "dh", "7450");
	split_is("0.0.0.0:80", 1, "0.0.0.0", "80");
	split_is("[::1]:7450", 0, "::1", "7450");
	split_is("[fe80::1]", 0, "fe80::1", "dp");
	split_is("::1", 0, "::1", "dp");

	char h[8], p[8];
	assert_int_equal(tcp_split("[::1", 0, "", "", h, sizeof(h), p, sizeof(p)), -EINVAL);
	assert_int_equal(tcp_split("[::1]x", 0, "", "", h, sizeof(h), p, sizeof(p)), -EINVAL);
	assert_int_equal(tcp_split("a-very-long-host:1", 0, "", "", h, sizeof(h), p, sizeof(p)),
			 -EINVAL);
}

static void test_listen(void **state)
{
	char bound[64];

	(void)state;
	int fd = tcp_listen("127.0.0.1:0", bound, sizeof(bound));
	assert_true(fd >= 0);
	assert_true(strncmp(bound, "127.0.0.1:", 10) == 0 && strcmp(bound + 10, "0") != 0);
	close(fd);
	assert_int_equal(tcp_listen("nowhere", bound, sizeof(bound)), -EINVAL);
	assert_int_equal(tcp_listen("127.0.0.1:70000", bound, sizeof(bound)), -EINVAL);
	assert_int_equal(tcp_listen("127.0.0.1:", bound, sizeof(bound)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_split),
	    cmocka_unit_test(test_listen),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
