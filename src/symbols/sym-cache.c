/*
 * The symbol cache (see sym-cache.h): building a binary's table from the
 * symbolizer's own answers, the file format, and lookups in it.
 *
 * A table file is a header, then three arrays, each 8-byte aligned:
 *
 *     struct cache_iv iv[n]       interval starts, strictly increasing,
 *                                 and their frames: first, count
 *     struct cache_frame fr[m]    string offsets and a line
 *     char strings[size]          NUL-terminated, NUL-padded to 8 bytes
 *
 * An interval runs from its start to the next one's; an address below the
 * first is unknown, as is an interval of 0 frames. The file is read by
 * mmap and every index in it is checked once when it is loaded, so a
 * lookup does no checks and a hostile file cannot point outside itself.
 */
#include "symbols/sym-cache.h"

#include "symbols/sym-file.h"
#include "util/array.h"
#include "util/hash.h"
#include "util/outfile.h"
#include "util/version.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CACHE_MAGIC  "RECCESYM"
#define CACHE_ENDIAN 0x01020304u
#define NO_STRING    UINT32_MAX

struct cache_header {
	char magic[8];
	uint32_t version; /* SYM_CACHE_VERSION */
	uint32_t endian;  /* CACHE_ENDIAN, as the writer stored it */
	char recce[16];	  /* RECCE_VERSION of the writer */
	char build_id[136];
	uint64_t file_size;
	uint64_t checksum; /* of every byte after the header */
	uint64_t nintervals, nframes, strings_size;
	uint32_t has_dwarf;
	uint32_t owner;	 /* the uid that owned the binary it was built from */
	uint64_t source; /* sym_file_source() of the binary it was built from */
	/* The binary's loadable segments, so that a file offset becomes an
	 * address of the table when the binary itself is gone. */
	uint64_t nsegs;
	struct load_seg segs[SYM_CACHE_MAX_SEGS];
};
_Static_assert(sizeof(struct cache_header) % 8 == 0, "arrays after the header stay aligned");

/* An interval's start and its frames, together: one cache line holds
 * what a lookup reads of several neighbours. */
struct cache_iv {
	uint64_t lo;
	uint32_t first, count;
};

struct cache_frame {
	uint32_t function, system_name, file; /* offsets into strings, or NO_STRING */
	int32_t line;
};

struct sym_cache {
	unsigned char *image; /* the whole file */
	size_t size;
	int mapped; /* image is an mmap, else malloc'd */
	const struct cache_header *h;
	const struct cache_iv *iv;
	const struct cache_frame *fr;
	const char *str;
	/* An index over lo[], built on load: bucket b of the addresses from
	 * lo[0] on, 2^shift bytes each, holds the intervals from
	 * bucket[b] to bucket[b + 1], so a lookup searches a few neighbours
	 * instead of the whole table. */
	uint32_t *bucket;
	uint64_t nbuckets;
	unsigned shift;
};

static int cache_index(struct sym_cache *c);

/* A fast checksum for telling a damaged file apart, not an adversary:
 * indices are checked separately. */
static uint64_t checksum(const unsigned char *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;

	for (; n >= 8; p += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 29;
	}
	for (; n; p++, n--)
		h = (h ^ *p) * 0xc4ceb9fe1a85ec53ULL;
	return h ^ h >> 32;
}

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Points c's arrays into its image after checking that they fit. */
static int cache_layout(struct sym_cache *c)
{
	const struct cache_header *h = (const struct cache_header *)c->image;
	uint64_t need = sizeof(*h);

	if (c->size < sizeof(*h))
		return -EBADMSG;
	if (h->nintervals > SYM_CACHE_MAX_INTERVALS || h->nframes > (uint64_t)MAX_FRAMES << 24 ||
	    h->strings_size > ((uint64_t)1 << 32) || h->strings_size % 8 != 0)
		return -EBADMSG;
	c->h = h;
	c->iv = (const struct cache_iv *)(c->image + need);
	need += h->nintervals * sizeof(struct cache_iv);
	c->fr = (const struct cache_frame *)(c->image + need);
	need += h->nframes * sizeof(struct cache_frame);
	c->str = (const char *)(c->image + need);
	need += h->strings_size;
	return need == c->size && need == h->file_size ? 0 : -EBADMSG;
}

static int string_ok(const struct sym_cache *c, uint32_t off)
{
	return off == NO_STRING || off < c->h->strings_size;
}

/* Every check a table passes before one lookup is made in it. */
static int cache_validate(struct sym_cache *c, const char *build_id, uint64_t source, int sum)
{
	const struct cache_header *h = (const struct cache_header *)c->image;

	if (c->size < sizeof(*h) || memcmp(h->magic, CACHE_MAGIC, 8) != 0 ||
	    h->version != SYM_CACHE_VERSION || h->endian != CACHE_ENDIAN ||
	    strncmp(h->recce, RECCE_VERSION, sizeof(h->recce)) != 0 ||
	    (build_id && strncmp(h->build_id, build_id, sizeof(h->build_id)) != 0) ||
	    h->build_id[sizeof(h->build_id) - 1] != '\0' || (source && h->source != source) ||
	    h->nsegs > SYM_CACHE_MAX_SEGS)
		return -EBADMSG;
	if (cache_layout(c) < 0)
		return -EBADMSG;
	if (sum && checksum(c->image + sizeof(*h), c->size - sizeof(*h)) != h->checksum)
		return -EBADMSG;
	if (h->strings_size && c->str[h->strings_size - 1] != '\0')
		return -EBADMSG;
	for (uint64_t i = 0; i < h->nintervals; i++) {
		const struct cache_iv *v = &c->iv[i];
		if (i > 0 && v->lo <= c->iv[i - 1].lo)
			return -EBADMSG;
		if (v->count > MAX_FRAMES || v->first > h->nframes ||
		    v->count > h->nframes - v->first)
			return -EBADMSG;
	}
	for (uint64_t i = 0; i < h->nframes; i++) {
		const struct cache_frame *f = &c->fr[i];
		if (!string_ok(c, f->function) || !string_ok(c, f->system_name) ||
		    !string_ok(c, f->file) || f->line < 0)
			return -EBADMSG;
	}
	return 0;
}

/* Validates c and builds its index; on failure frees c. */
static int cache_ready(struct sym_cache *c, const char *build_id, uint64_t source, int sum)
{
	int rc = cache_validate(c, build_id, source, sum);

	if (rc == 0)
		rc = cache_index(c);
	if (rc < 0)
		sym_cache_free(c);
	return rc;
}

int sym_cache_path(const char *dir, const char *build_id, char *buf, size_t len)
{
	size_t n = strlen(build_id);
	int w;

	if (n < 4 || n >= sizeof(((struct cache_header *)0)->build_id) ||
	    strspn(build_id, "0123456789abcdef") != n)
		return -EINVAL;
	w = snprintf(buf, len, "%s/symbols/%.2s/%s.sym", dir, build_id, build_id + 2);
	return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}

int sym_cache_load(const char *dir, const char *build_id, uint64_t source, struct sym_cache **out)
{
	char path[PATH_MAX];
	struct stat st;
	struct sym_cache *c;
	int fd, rc = sym_cache_path(dir, build_id, path, sizeof(path));

	if (rc < 0)
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ELOOP ? -EBADMSG : -errno;
	/* Only a file of ours (or root's) that nobody else may write is read:
	 * names from it end up in what recce shows. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & 022) ||
	    st.st_size < (off_t)sizeof(struct cache_header)) {
		close(fd);
		return -EBADMSG;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->size = (size_t)st.st_size;
	c->image = mmap(NULL, c->size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (c->image == MAP_FAILED) {
		rc = -errno;
		free(c);
		return rc;
	}
	c->mapped = 1;
	if ((rc = cache_ready(c, build_id, source, 1)) < 0)
		return rc;
	/* Without the binary to compare with, only a table built from a file
	 * of ours or root's answers: never one another user made. */
	if (!source && c->h->owner != 0 && c->h->owner != (uint32_t)geteuid()) {
		sym_cache_free(c);
		return -EPERM;
	}
	/* Recently used tables survive the size cap: mark this one used,
	 * at most once a day so that reading stays read-only nearly always. */
	if (time(NULL) - st.st_mtim.tv_sec > 86400)
		utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW);
	*out = c;
	return 0;
}

int sym_cache_parse_unchecked(const void *data, size_t size, struct sym_cache **out)
{
	struct sym_cache *c = calloc(1, sizeof(*c));
	int rc;

	if (!c || !(c->image = malloc(size ? size : 1))) {
		free(c);
		return -ENOMEM;
	}
	memcpy(c->image, data, size);
	c->size = size;
	if ((rc = cache_ready(c, NULL, 0, 0)) < 0)
		return rc;
	*out = c;
	return 0;
}

void sym_cache_free(struct sym_cache *c)
{
	if (!c)
		return;
	if (c->mapped)
		munmap(c->image, c->size);
	else
		free(c->image);
	free(c->bucket);
	free(c);
}

const struct load_seg *sym_cache_segments(const struct sym_cache *c, size_t *n)
{
	*n = (size_t)c->h->nsegs;
	return c->h->segs;
}

int sym_cache_has_dwarf(const struct sym_cache *c)
{
	return c->h->has_dwarf != 0;
}

static const char *cache_string(const struct sym_cache *c, uint32_t off)
{
	return off == NO_STRING ? NULL : c->str + off;
}

/* Builds c's bucket index over lo[]: about four intervals a bucket, at
 * most 2^22 buckets. */
static int cache_index(struct sym_cache *c)
{
	uint64_t n = c->h->nintervals, span, nb = 1;
	unsigned shift = 0;

	if (n == 0)
		return 0;
	span = c->iv[n - 1].lo - c->iv[0].lo;
	while (nb < n / 4 && nb < (1u << 22))
		nb <<= 1;
	while (shift < 63 && (span >> shift) >= nb)
		shift++;
	nb = (span >> shift) + 1;
	c->bucket = malloc((size_t)(nb + 1) * sizeof(*c->bucket));
	if (!c->bucket)
		return -ENOMEM;
	c->nbuckets = nb;
	c->shift = shift;
	/* bucket[b]: the number of intervals starting below bucket b. */
	uint64_t i = 0;
	for (uint64_t b = 0; b <= nb; b++) {
		while (i < n && (b == nb || ((c->iv[i].lo - c->iv[0].lo) >> shift) < b))
			i++;
		c->bucket[b] = (uint32_t)i;
	}
	return 0;
}

void sym_cache_prefetch(const struct sym_cache *c, uint64_t vaddr)
{
	if (c->nbuckets == 0 || vaddr < c->iv[0].lo)
		return;
	uint64_t b = (vaddr - c->iv[0].lo) >> c->shift;
	if (b < c->nbuckets)
		__builtin_prefetch(&c->iv[c->bucket[b]]);
}

int sym_cache_lookup(const struct sym_cache *c, uint64_t vaddr, struct sym_frame *frames, int max)
{
	size_t lo = 0, n = (size_t)c->h->nintervals;

	if (n == 0 || vaddr < c->iv[0].lo)
		return 0;
	uint64_t b = (vaddr - c->iv[0].lo) >> c->shift;
	if (b < c->nbuckets) {
		lo = c->bucket[b];
		n = c->bucket[b + 1] - lo;
	} else {
		lo = n;
		n = 0;
	}

	/* The last interval starting at or below vaddr. */
	while (n > 0) {
		size_t half = n / 2;
		if (c->iv[lo + half].lo <= vaddr) {
			lo += half + 1;
			n -= half + 1;
		} else {
			n = half;
		}
	}
	if (lo == 0)
		return 0;
	const struct cache_iv *at = &c->iv[lo - 1];
	int count = (int)at->count < max ? (int)at->count : max;
	for (int i = 0; i < count; i++) {
		const struct cache_frame *f = &c->fr[at->first + (uint32_t)i];
		frames[i] = (struct sym_frame){cache_string(c, f->function),
					       cache_string(c, f->system_name),
					       cache_string(c, f->file), f->line};
	}
	return count;
}

/* ---- building ---- */

struct builder {
	struct u64vec starts;
	struct cache_iv *iv;
	size_t niv, iv_cap;
	struct cache_frame *fr;
	size_t nfr, fr_cap;
	char *str;
	size_t nstr, str_cap;
	struct u64map str_off;	/* interned string -> offset + 1 */
	struct u64map chain_at; /* hash of a chain -> first frame + 1 */
	struct sym_frame prev[MAX_FRAMES];
	int nprev;
};

static int string_offset(struct builder *b, const char *s, uint32_t *off)
{
	uint64_t v;

	if (!s) {
		*off = NO_STRING;
		return 0;
	}
	if (u64map_get(&b->str_off, (uintptr_t)s, &v)) {
		*off = (uint32_t)(v - 1);
		return 0;
	}
	size_t len = strlen(s) + 1;
	if (b->nstr + len >= NO_STRING)
		return -E2BIG;
	char *p = array_reserve(b->str, &b->str_cap, b->nstr + len, 1);
	if (!p)
		return -ENOMEM;
	b->str = p;
	memcpy(b->str + b->nstr, s, len);
	*off = (uint32_t)b->nstr;
	b->nstr += len;
	return u64map_put(&b->str_off, (uintptr_t)s, *off + 1);
}

static uint64_t chain_hash(const struct sym_frame *fr, int n)
{
	uint64_t h = hash_fnv1a_value(HASH_FNV1A_INIT, (uint64_t)n);

	for (int i = 0; i < n; i++) {
		/* Strings are interned: their addresses name them. */
		h = hash_fnv1a_value(h, (uintptr_t)fr[i].function);
		h = hash_fnv1a_value(h, (uintptr_t)fr[i].system_name);
		h = hash_fnv1a_value(h, (uintptr_t)fr[i].file);
		h = hash_fnv1a_value(h, (uint32_t)fr[i].line);
	}
	return h;
}

static int same_chain(const struct sym_frame *a, const struct sym_frame *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i].function != b[i].function || a[i].system_name != b[i].system_name ||
		    a[i].file != b[i].file || a[i].line != b[i].line)
			return 0;
	return 1;
}

/* The first frame of a stored chain equal to fr[n], storing it if new. */
static int chain_store(struct builder *b, const struct sym_frame *fr, int n, uint32_t *first)
{
	uint64_t h = chain_hash(fr, n), v;
	int rc;

	if (u64map_get(&b->chain_at, h, &v)) {
		const struct cache_frame *c = &b->fr[v - 1];
		int same = 1;
		for (int i = 0; i < n && same; i++) {
			uint32_t fn, sys, file;
			if (string_offset(b, fr[i].function, &fn) < 0 ||
			    string_offset(b, fr[i].system_name, &sys) < 0 ||
			    string_offset(b, fr[i].file, &file) < 0)
				return -ENOMEM;
			same = c[i].function == fn && c[i].system_name == sys &&
			       c[i].file == file && c[i].line == fr[i].line;
		}
		if (same) {
			*first = (uint32_t)(v - 1);
			return 0;
		}
	}
	struct cache_frame *nf =
	    array_reserve(b->fr, &b->fr_cap, b->nfr + (size_t)n, sizeof(*b->fr));
	if (!nf)
		return -ENOMEM;
	b->fr = nf;
	for (int i = 0; i < n; i++) {
		struct cache_frame *c = &b->fr[b->nfr + (size_t)i];
		if ((rc = string_offset(b, fr[i].function, &c->function)) < 0 ||
		    (rc = string_offset(b, fr[i].system_name, &c->system_name)) < 0 ||
		    (rc = string_offset(b, fr[i].file, &c->file)) < 0)
			return rc;
		c->line = fr[i].line > 0 ? fr[i].line : 0;
	}
	*first = (uint32_t)b->nfr;
	b->nfr += (size_t)n;
	return u64map_put(&b->chain_at, h, *first + 1u);
}

/* Adds the interval starting at addr with frames fr[n], or extends the
 * previous one when its frames are the same. */
static int add_interval(struct builder *b, uint64_t addr, const struct sym_frame *fr, int n)
{
	uint32_t first = 0;
	int rc;

	if (b->niv > 0 && n == b->nprev && same_chain(fr, b->prev, n))
		return 0;
	if (n > 0 && (rc = chain_store(b, fr, n, &first)) < 0)
		return rc;
	struct cache_iv *nv = array_reserve(b->iv, &b->iv_cap, b->niv + 1, sizeof(*b->iv));
	if (!nv)
		return -ENOMEM;
	b->iv = nv;
	b->iv[b->niv++] = (struct cache_iv){addr, first, (uint32_t)n};
	memcpy(b->prev, fr, (size_t)n * sizeof(*fr));
	b->nprev = n;
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void builder_release(struct builder *b)
{
	free(b->starts.v);
	free(b->iv);
	free(b->fr);
	free(b->str);
	u64map_release(&b->str_off);
	u64map_release(&b->chain_at);
}

/* Lays the built table out as a file image in memory. */
static int builder_image(struct builder *b, const char *build_id, uint64_t source, uint32_t owner,
			 int has_dwarf, const struct load_seg *segs, size_t nsegs,
			 struct sym_cache **out)
{
	size_t nintervals = b->niv;
	size_t strsize = pad8(b->nstr);
	size_t size = sizeof(struct cache_header) + nintervals * sizeof(struct cache_iv) +
		      b->nfr * sizeof(struct cache_frame) + strsize;
	struct sym_cache *c = calloc(1, sizeof(*c));
	unsigned char *img = c ? calloc(1, size) : NULL;

	if (!img) {
		free(c);
		return -ENOMEM;
	}
	struct cache_header *h = (struct cache_header *)img;
	memcpy(h->magic, CACHE_MAGIC, 8);
	h->version = SYM_CACHE_VERSION;
	h->endian = CACHE_ENDIAN;
	strncpy(h->recce, RECCE_VERSION, sizeof(h->recce) - 1);
	strncpy(h->build_id, build_id, sizeof(h->build_id) - 1);
	h->file_size = size;
	h->nintervals = nintervals;
	h->nframes = b->nfr;
	h->strings_size = strsize;
	h->has_dwarf = has_dwarf != 0;
	h->source = source;
	h->owner = owner;
	h->nsegs = nsegs < SYM_CACHE_MAX_SEGS ? nsegs : SYM_CACHE_MAX_SEGS;
	memcpy(h->segs, segs, (size_t)h->nsegs * sizeof(*segs));
	c->image = img;
	c->size = size;
	cache_layout(c);
	if (nintervals)
		memcpy((void *)c->iv, b->iv, nintervals * sizeof(struct cache_iv));
	if (b->nfr)
		memcpy((void *)c->fr, b->fr, b->nfr * sizeof(struct cache_frame));
	if (b->nstr)
		memcpy((void *)c->str, b->str, b->nstr);
	h->checksum = checksum(img + sizeof(*h), size - sizeof(*h));
	if (cache_index(c) < 0) {
		sym_cache_free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

int sym_cache_build(struct symbolizer *s, struct sym_file *f, struct sym_cache **out)
{
	struct builder b = {0};
	struct sym_frame fr[MAX_FRAMES];
	size_t n;
	int rc, has_dwarf;

	u64map_init(&b.str_off);
	u64map_init(&b.chain_at);
	rc = sym_boundaries(f, &b.starts);
	has_dwarf = sym_file_load_dwarf(f);
	if (rc == 0 && has_dwarf)
		rc = sym_dwarf_boundaries(f, &b.starts);
	else if (rc == 0)
		rc = sym_table_go_boundaries(f, &b.starts);
	if (rc == 0 && b.starts.n > SYM_CACHE_MAX_INTERVALS)
		rc = -E2BIG;
	if (rc < 0)
		goto out;
	qsort(b.starts.v, b.starts.n, sizeof(uint64_t), u64_cmp);
	n = b.starts.n;
	for (size_t i = 0; i < n && rc == 0; i++) {
		uint64_t addr = b.starts.v[i];
		if (i > 0 && addr == b.starts.v[i - 1])
			continue;
		int k = sym_resolve(s, f, addr, fr, MAX_FRAMES);
		rc = k < 0 ? k : add_interval(&b, addr, fr, k);
	}
	uint32_t owner;
	uint64_t source = sym_file_source(f, &owner);
	if (rc == 0 && !source)
		rc = -EIO; /* a file that does not read whole is no table's source */
	if (rc == 0)
		rc = builder_image(&b, f->build_id, source, owner, has_dwarf, f->segs, f->nsegs,
				   out);
out:
	builder_release(&b);
	return rc;
}

/* ---- saving and the size cap ---- */

static int write_image(FILE *fp, const void *arg)
{
	const struct sym_cache *c = arg;

	return fwrite(c->image, 1, c->size, fp) == c->size ? 0 : -EIO;
}

/* Makes every missing directory above the file at path (mkdir -p). */
static int make_dirs(const char *path)
{
	char buf[PATH_MAX];
	struct stat st;

	snprintf(buf, sizeof(buf), "%s", path);
	char *last = strrchr(buf, '/');
	if (!last || last == buf)
		return 0;
	*last = '\0';
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char keep = *p;
		*p = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST &&
		    (stat(buf, &st) < 0 || !S_ISDIR(st.st_mode)))
			return -errno;
		if (!keep)
			return 0;
		*p = keep;
	}
}

struct aged {
	char name[NAME_MAX + 4]; /* XX/REST.sym, under DIR/symbols */
	time_t mtime;
	off_t size;
};

static int aged_cmp(const void *a, const void *b)
{
	time_t x = ((const struct aged *)a)->mtime, y = ((const struct aged *)b)->mtime;

	return (x > y) - (x < y);
}

/* Adds the tables in subdirectory sub of top to v. */
static void list_tables(int top, const char *sub, struct aged **v, size_t *n, size_t *cap,
			uint64_t *total)
{
	int fd = openat(top, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		size_t len = strlen(e->d_name);
		if (len < 5 || len > NAME_MAX || strcmp(e->d_name + len - 4, ".sym") != 0 ||
		    fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		struct aged *nv = array_reserve(*v, cap, *n + 1, sizeof(**v));
		if (!nv)
			break;
		*v = nv;
		nv[*n].name[0] = sub[0];
		nv[*n].name[1] = sub[1];
		nv[*n].name[2] = '/';
		memcpy(nv[*n].name + 3, e->d_name, len + 1);
		nv[*n].mtime = st.st_mtim.tv_sec;
		nv[*n].size = st.st_size;
		*total += (uint64_t)st.st_size;
		(*n)++;
	}
	closedir(d);
}

/* Removes the least recently used tables under dir until they fit in max
 * bytes. Best effort: a table another process removes first is skipped. */
static void trim(const char *dir, uint64_t max)
{
	char path[PATH_MAX];
	struct aged *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *e;
	int top;

	if (snprintf(path, sizeof(path), "%s/symbols", dir) >= (int)sizeof(path))
		return;
	top = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = top >= 0 ? fdopendir(dup(top)) : NULL;
	if (!d) {
		if (top >= 0)
			close(top);
		return;
	}
	while ((e = readdir(d)) != NULL)
		if (strlen(e->d_name) == 2 && e->d_name[0] != '.')
			list_tables(top, e->d_name, &v, &n, &cap, &total);
	closedir(d);
	if (total > max) {
		qsort(v, n, sizeof(*v), aged_cmp);
		for (size_t i = 0; i < n && total > max; i++)
			if (unlinkat(top, v[i].name, 0) == 0)
				total -= (uint64_t)v[i].size;
	}
	close(top);
	free(v);
}

int sym_cache_can_save(const char *dir, const char *build_id)
{
	char path[PATH_MAX];
	int rc = sym_cache_path(dir, build_id, path, sizeof(path));

	if (rc < 0 || (rc = make_dirs(path)) < 0)
		return rc;
	*strrchr(path, '/') = '\0';
	return faccessat(AT_FDCWD, path, W_OK | X_OK, AT_EACCESS) == 0 ? 0 : -errno;
}

int sym_cache_save(const char *dir, const struct sym_cache *c, uint64_t max_bytes)
{
	char path[PATH_MAX];
	int rc = sym_cache_path(dir, c->h->build_id, path, sizeof(path));

	if (rc < 0)
		return rc;
	if (c->size > max_bytes)
		return -EFBIG;
	if ((rc = make_dirs(path)) < 0)
		return rc;
	rc = outfile_write(path, write_image, c);
	if (rc == 0) {
		/* Its owner's alone, whatever the umask: the names of a
		 * private binary are private, and loading refuses a table
		 * others could have written. */
		chmod(path, 0600);
		trim(dir, max_bytes);
	}
	return rc;
}
