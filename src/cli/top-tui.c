/*
 * The interactive screen of `recce top` (ncurses): the header and the rows
 * of the latest snapshot, refreshed every -d seconds, with keys to sort
 * (c, m, n), filter (/), pause (p), open the hottest stacks of a row
 * (Enter), write a flamegraph of a row (f) and quit (q). The screen is
 * drawn from the same text lines as batch mode (top-batch.c), so the two
 * cannot disagree.
 */
#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/top-ui.h"
#include "top/top-stacks.h"
#include "writers/writer-flame.h"
#include "util/sat.h"

#define MIN_COLS     60
#define MIN_LINES    10
#define FILTER_LEN   64
#define STACK_FRAMES 256
#define SHOWN_STACKS 5

enum view { VIEW_ROWS, VIEW_STACKS, VIEW_FILTER };

struct tui {
	struct top_session *s;
	enum view view;
	enum top_sort sort;
	char filter[FILTER_LEN], editing[FILTER_LEN];
	int paused;
	size_t selected, first; /* index in the view, first row drawn */
	pid_t sel_pid, sel_tid; /* the selected row, followed across refreshes */
	char message[TOP_LINE_LEN];
	struct top_named_stacks named; /* of the selected row, for its views */
};

/* The tui ends: its memory goes (the screen is the caller's). */
static void tui_free(struct tui *t)
{
	top_named_stacks_release(&t->named);
	free(t);
}

static const char *sort_name(enum top_sort k)
{
	return k == TOP_SORT_CPU ? "cpu" : k == TOP_SORT_MEM ? "memory" : "name";
}

static void draw_line(int y, const char *text, int attr)
{
	if (y >= LINES)
		return;
	attron(attr);
	mvaddnstr(y, 0, text, COLS);
	attroff(attr);
}

static void draw_status(struct tui *t)
{
	char buf[TOP_LINE_LEN];

	if (t->view == VIEW_FILTER)
		snprintf(buf, sizeof(buf), "filter: %s_", t->editing);
	else if (t->message[0])
		snprintf(buf, sizeof(buf), "%s", t->message);
	else
		snprintf(
		    buf, sizeof(buf),
		    "sort: %s%s%s%s | c/m/n sort  / filter  p pause  Enter stacks  f flamegraph  "
		    "q quit",
		    sort_name(t->sort), t->filter[0] ? " | filter: " : "", t->filter,
		    t->paused ? " | PAUSED" : "");
	draw_line(LINES - 1, buf, A_REVERSE);
}

static void draw_rows(struct tui *t, int y)
{
	const struct top_row *const *rows;
	char buf[TOP_LINE_LEN];
	ssize_t n = top_model_view(t->s->model, t->sort, t->filter, &rows);

	top_format_columns(t->s, buf, sizeof(buf));
	draw_line(y++, buf, A_BOLD);
	if (n <= 0) {
		draw_line(y, n < 0 ? "out of memory" : "no rows", 0);
		return;
	}
	/* Keep the selection on the same task when rows move. */
	for (ssize_t i = 0; i < n; i++)
		if (rows[i]->pid == t->sel_pid && rows[i]->tid == t->sel_tid)
			t->selected = (size_t)i;
	if (t->selected >= (size_t)n)
		t->selected = (size_t)n - 1;
	size_t room = (size_t)(LINES - 1 - y);
	if (t->selected < t->first)
		t->first = t->selected;
	if (room && t->selected >= t->first + room)
		t->first = t->selected - room + 1;
	if (t->first >= (size_t)n)
		t->first = 0;
	for (size_t i = t->first; i < (size_t)n && y < LINES - 1; i++) {
		top_format_row(t->s, rows[i], buf, sizeof(buf));
		draw_line(y++, buf, i == t->selected ? A_REVERSE : 0);
	}
	t->sel_pid = rows[t->selected]->pid;
	t->sel_tid = rows[t->selected]->tid;
}

static void draw_stacks(struct tui *t, int y)
{
	char buf[TOP_LINE_LEN];
	const struct top_row *r = top_model_find(t->s->model, t->sel_pid, t->sel_tid);

	snprintf(buf, sizeof(buf),
		 "hottest stacks of %s %d (%s) in the last interval; Enter or Esc: back",
		 t->s->npids ? "thread" : "process", (int)t->sel_tid, r ? r->name : "gone");
	draw_line(y++, buf, A_BOLD);
	if (!t->s->sampler) {
		draw_line(y, "sampling off: no stacks", 0);
		return;
	}
	struct top_named_stacks *ns = &t->named;
	ssize_t n = top_named_stacks_build(ns, t->s->sampler, t->s->model, t->sel_pid, t->sel_tid,
					   1, STACK_FRAMES);
	if (n <= 0) {
		draw_line(y, "no samples in the last interval", 0);
		return;
	}
	for (ssize_t i = 0; i < n && i < SHOWN_STACKS && y < LINES - 1; i++) {
		const struct top_named_stack *st = &ns->v[i];
		snprintf(buf, sizeof(buf), "%5.1f%%  %llu sample%s", 100.0 * st->count / ns->total,
			 (unsigned long long)st->count, st->count == 1 ? "" : "s");
		draw_line(y++, buf, A_BOLD);
		for (size_t f = 0; f < st->nframes && y < LINES - 1; f++) {
			const struct top_frame *fr = &ns->frames[st->first + f];
			if (fr->file && fr->line)
				snprintf(buf, sizeof(buf), "    %-40s %s:%d", fr->function,
					 fr->file, fr->line);
			else
				snprintf(buf, sizeof(buf), "    %-40s %s", fr->function,
					 fr->kernel ? "[kernel]" : "");
			draw_line(y++, buf, 0);
		}
	}
}

static void draw(struct tui *t)
{
	char lines[3 + 1 + TOP_MAX_EVENTS][TOP_LINE_LEN];
	int y = 0;

	erase();
	if (COLS < MIN_COLS || LINES < MIN_LINES) {
		mvprintw(0, 0, "terminal too small: recce top needs %dx%d, this is %dx%d", MIN_COLS,
			 MIN_LINES, COLS, LINES);
		refresh();
		return;
	}
	size_t n = top_format_header(t->s, lines, sizeof(lines) / sizeof(lines[0]));
	for (size_t i = 0; i < n && y < LINES - 3; i++)
		draw_line(y++, lines[i], 0);
	if (t->view == VIEW_STACKS)
		draw_stacks(t, y);
	else
		draw_rows(t, y);
	draw_status(t);
	refresh();
}

/* The stacks of the selected row over the kept intervals, as a
 * stack_set for the flamegraph writer: frames root first. */
static int write_flame(struct tui *t, const char *path, uint64_t *samples)
{
	struct top_named_stacks *ns = &t->named;
	struct stack_set set;
	int err = 0;

	memset(&set, 0, sizeof(set));
	ssize_t n = top_named_stacks_build(ns, t->s->sampler, t->s->model, t->sel_pid, t->sel_tid,
					   t->s->history, STACK_FRAMES);
	if (n < 0)
		return (int)n;
	*samples = ns->total;
	set.entries = calloc((size_t)n + 1, sizeof(*set.entries));
	set.frame_pool = calloc(ns->nframes + 1, sizeof(*set.frame_pool));
	if (!set.entries || !set.frame_pool) {
		stacks_release(&set);
		return -ENOMEM;
	}
	set.type = "samples";
	set.unit = "count";
	for (ssize_t i = 0; i < n; i++) {
		const struct top_named_stack *st = &ns->v[i];
		struct stack_entry *e = &set.entries[set.n++];
		e->frames = set.frame_pool + st->first;
		e->nframes = st->nframes;
		e->value = (int64_t)st->count;
		for (size_t f = 0; f < st->nframes; f++) {
			const struct top_frame *fr = &ns->frames[st->first + st->nframes - 1 - f];
			e->frames[f].name = fr->function;
			e->frames[f].file = fr->file ? fr->file : "";
			e->frames[f].line = fr->line;
			e->frames[f].module = "";
		}
		set.total = sat_add(set.total, e->value);
	}
	FILE *out = fopen(path, "w");
	if (!out) {
		err = -errno;
	} else {
		err = flame_write_svg(out, &set, NULL);
		if (fclose(out) != 0 && !err)
			err = -EIO;
	}
	stacks_release(&set);
	return err;
}

static void flame_key(struct tui *t)
{
	char path[64];
	uint64_t samples = 0;

	if (!t->s->sampler) {
		snprintf(t->message, sizeof(t->message), "sampling off: no flamegraph");
		return;
	}
	snprintf(path, sizeof(path), "recce-top-%d.svg", (int)t->sel_tid);
	int err = write_flame(t, path, &samples);
	if (err)
		snprintf(t->message, sizeof(t->message), "cannot write '%s': %s", path,
			 strerror(-err));
	else
		snprintf(t->message, sizeof(t->message),
			 "wrote '%s': %llu samples of the last %u intervals", path,
			 (unsigned long long)samples, t->s->history);
}

static void filter_key(struct tui *t, int ch)
{
	size_t len = strlen(t->editing);

	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		memcpy(t->filter, t->editing, sizeof(t->filter));
		t->view = VIEW_ROWS;
	} else if (ch == 27) {
		t->view = VIEW_ROWS;
	} else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (len)
			t->editing[len - 1] = 0;
	} else if (ch >= 32 && ch < 127 && len + 1 < sizeof(t->editing)) {
		t->editing[len] = (char)ch;
		t->editing[len + 1] = 0;
	}
}

/* Moves the selection to position `selected` of the current view. */
static void select_index(struct tui *t, size_t selected)
{
	const struct top_row *const *rows;
	ssize_t n = top_model_view(t->s->model, t->sort, t->filter, &rows);

	if (n <= 0)
		return;
	t->selected = selected < (size_t)n ? selected : (size_t)n - 1;
	t->sel_pid = rows[t->selected]->pid;
	t->sel_tid = rows[t->selected]->tid;
}

/* Handles one key; returns 1 to quit. */
static int handle_key(struct tui *t, int ch)
{
	if (t->view == VIEW_FILTER) {
		filter_key(t, ch);
		return 0;
	}
	t->message[0] = 0;
	switch (ch) {
	case 'q':
	case 'Q':
		return 1;
	case 'c':
		t->sort = TOP_SORT_CPU;
		break;
	case 'm':
		t->sort = TOP_SORT_MEM;
		break;
	case 'n':
		t->sort = TOP_SORT_NAME;
		break;
	case 'p':
		t->paused = !t->paused;
		break;
	case '/':
		memcpy(t->editing, t->filter, sizeof(t->editing));
		t->view = VIEW_FILTER;
		break;
	case 'f':
		flame_key(t);
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		t->view = t->view == VIEW_STACKS ? VIEW_ROWS : VIEW_STACKS;
		break;
	case 27:
	case KEY_BACKSPACE:
		t->view = VIEW_ROWS;
		break;
	case KEY_UP:
	case 'k':
		select_index(t, t->selected ? t->selected - 1 : 0);
		break;
	case KEY_DOWN:
	case 'j':
		select_index(t, t->selected + 1);
		break;
	default:
		break;
	}
	return 0;
}

int top_tui_run(struct top_session *s)
{
	struct tui *t = calloc(1, sizeof(*t));
	int status = 0;

	if (!t)
		return 1;
	t->s = s;
	top_named_stacks_init(&t->named);
	if (!newterm(NULL, stdout, stdin)) {
		fprintf(stderr, "recce: cannot use this terminal (TERM=%s); try -b\n",
			getenv("TERM") ? getenv("TERM") : "");
		tui_free(t);
		return 1;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	/* Show something at once: the baseline has rows, without rates. */
	draw(t);
	for (;;) {
		int r = top_session_wait(s, 0);
		if (r < 0)
			break;
		if (r == 1) {
			int ch, quit = 0;
			while (!quit && (ch = getch()) != ERR)
				quit = handle_key(t, ch);
			if (quit)
				break;
			draw(t);
			continue;
		}
		/* Paused, snapshots go on (so that rates stay true when it
		 * resumes) but the screen shows the one it stopped on until a
		 * key is pressed. */
		int err = top_session_snapshot(s);
		if (err) {
			endwin();
			fprintf(stderr, "recce: cannot read the processes: %s\n", strerror(-err));
			tui_free(t);
			return 1;
		}
		s->shown++;
		if (!t->paused)
			draw(t);
		if (s->npids && !s->nalive) {
			endwin();
			fprintf(stderr, "recce: every watched process has exited\n");
			tui_free(t);
			return 0;
		}
		if (s->count && s->shown >= s->count)
			break;
	}
	endwin();
	tui_free(t);
	return status;
}
