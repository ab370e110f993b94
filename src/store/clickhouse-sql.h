/*
 * What the two halves of the fleet store (clickhouse.c writes,
 * clickhouse-query.c reads) share: the connection's state, one statement
 * over the HTTP interface, and the SQL and TabSeparated spelling of
 * values. Not API: store/clickhouse.h is.
 */
#ifndef RECCE_STORE_CLICKHOUSE_SQL_H
#define RECCE_STORE_CLICKHOUSE_SQL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/http-client.h"
#include "util/u64map.h"

struct proc_lock;

struct clickhouse {
	char host[256], port[16], db[64];
	char user[128];	/* from the URL, or "" */
	char auth[512]; /* "&user=...&password=..." or "" */
	int url_password; /* the URL carried a password */
	char where[400];
	char error[512];
	int created;
	struct u64map sent; /* stack hashes the server has */
	uint64_t *last;	    /* those the last export sent */
	size_t nlast, last_cap;
	struct proc_lock *shared; /* taken around the stacks sent, or NULL */
	int retain_days;	  /* days kept before today's, or 0: all */
	char retained[16];	  /* the day retention last ran for */
	char retained_now[16];	  /* the day this export ran it for, or "" */
	char cutoff[16];	  /* the first day it kept */
	int dropped;		  /* partitions it dropped */
	char retain_error[512];	  /* why it failed, or "" */
};

/*
 * Runs one statement: with data, sql goes in the URL and data is the
 * body (an INSERT's rows); without, sql is the body. Returns 0 with the
 * answer in *r (released by the caller), or -errno with
 * clickhouse_error() set: -EIO for an answer other than 200, whose first
 * line it quotes.
 */
int clickhouse_run(struct clickhouse *ch, const char *sql, const char *data, size_t len,
		   struct http_reply *r);

/* How a query gets the answer to one SELECT: clickhouse_run()'s over
 * HTTP, or a fuzz target's. Returns 0 with the TabSeparated rows in *r
 * (released by the caller) or -errno. */
typedef int (*clickhouse_fetch_fn)(void *arg, const char *sql, struct http_reply *r);

struct profile;
struct store_filter;
struct store_query_stats;

/* clickhouse_query() (store/clickhouse.h) with its answers from fetch:
 * the totals, then the stacks, then the samples. */
int clickhouse_query_with(struct clickhouse *ch, clickhouse_fetch_fn fetch, void *arg,
			  const struct store_filter *f, struct profile **out,
			  struct store_query_stats *st);

/* Writes sql with every "@." replaced by the database's name and a dot. */
void clickhouse_put_sql(FILE *fp, const char *sql, const char *db);

/* A string in single quotes with backslash escapes, as an SQL literal and
 * an element of an array in TabSeparated. */
void clickhouse_put_quoted(FILE *fp, const char *s);

/* The UTC date of t_ns, "YYYY-MM-DD" (the partition key). */
void clickhouse_day(int64_t t_ns, char day[16]);

#endif
