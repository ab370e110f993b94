/*
 * The event files librecce leaves in its directory (/dev/shm, or
 * $RECCE_EVENTS_DIR): recce-PID.events, one a process.
 */
#ifndef RECCE_EVENTS_RING_FILES_H
#define RECCE_EVENTS_RING_FILES_H

/*
 * Removes the files of processes that no longer run (crashed or killed:
 * a clean exit removes its own). Returns how many, or -errno when the
 * directory cannot be read. Files of other users are left alone.
 */
int ring_files_clean(const char *dir);

#endif
