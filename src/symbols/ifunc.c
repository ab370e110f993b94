/*
 * IFUNC implementations by this process's loader (see ifunc.h): dlopen
 * with RTLD_NOLOAD finds the file only if it is already mapped, dlsym
 * runs the resolver's choice, and the link map's base turns the address
 * into the file's own.
 */
#include "symbols/ifunc.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <sys/stat.h>

int ifunc_resolve_here(const char *path, const char *symbol, uint64_t *vaddr)
{
	struct stat want, have;
	struct link_map *lm = NULL;
	int err = -ENOENT;

	if (stat(path, &want) != 0)
		return -ENOENT;
	void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return -ENOENT;
	void *impl = dlsym(h, symbol);
	if (impl && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name &&
	    stat(lm->l_name, &have) == 0 && have.st_dev == want.st_dev &&
	    have.st_ino == want.st_ino && (uintptr_t)impl >= lm->l_addr) {
		*vaddr = (uint64_t)((uintptr_t)impl - lm->l_addr);
		err = 0;
	}
	dlclose(h);
	return err;
}
