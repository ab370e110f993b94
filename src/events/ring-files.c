/*
 * The directory of event files: cleaning what crashed processes left
 * (docs/librecce.md states the policy; librecce itself removes such
 * files once they are a day old).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "events/ring-files.h"
#include "events/ring-format.h"

int ring_files_clean(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int removed = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		int pid = recce_events_name_pid(e->d_name);
		struct stat st;
		if (pid <= 0)
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || (geteuid() != 0 && st.st_uid != geteuid()))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}
