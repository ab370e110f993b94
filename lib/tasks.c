/*
 * Task hooks for event loops: chroprof's and tokio-console's view of a
 * loop (which kinds of work hog it) for C and C++ loops. A program
 * announces each task (a callback, a coroutine, a request) when it is
 * made, each time it runs and stops, and when it is done; `recce tasks`
 * turns the records into metrics per task type. Each hook is one event
 * in the calling thread's ring: the id in the value, the type's name only
 * at creation, the parent's id beside it.
 */
#include "recce.h"

#include "internal.h"

void recce_task_create(uint64_t id, const char *type, uint64_t parent)
{
	lib_put_task(RECCE_EV_TASK_CREATE, type ? type : "?", id, parent);
}

void recce_task_start(uint64_t id)
{
	lib_put_task(RECCE_EV_TASK_START, NULL, id, 0);
}

void recce_task_stop(uint64_t id)
{
	lib_put_task(RECCE_EV_TASK_STOP, NULL, id, 0);
}

void recce_task_finish(uint64_t id)
{
	lib_put_task(RECCE_EV_TASK_FINISH, NULL, id, 0);
}
