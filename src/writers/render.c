/*
 * Picking the writer of a profile view (see render.h).
 */
#include "writers/render.h"

#include <errno.h>
#include <string.h>

#include "writers/report-diff.h"
#include "writers/report-text.h"
#include "writers/writer-callgrind.h"
#include "writers/writer-chrome.h"
#include "writers/writer-flame.h"
#include "writers/writer-folded.h"
#include "writers/writer-pprof.h"
#include "writers/writer-speedscope.h"

static const struct {
	const char *name;
	enum render_format format;
} formats[] = {
    {"text", RENDER_TEXT},	       {"folded", RENDER_FOLDED},
    {"pprof", RENDER_PPROF},	       {"callgrind", RENDER_CALLGRIND},
    {"speedscope", RENDER_SPEEDSCOPE}, {"chrome", RENDER_CHROME},
    {"svg", RENDER_SVG},
};

int render_format_parse(const char *name, enum render_format *out)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (strcmp(name, formats[i].name) == 0) {
			*out = formats[i].format;
			return 0;
		}
	}
	return -EINVAL;
}

int render_needs_timeline(enum render_format f)
{
	return f == RENDER_CHROME;
}

int render_uses_timeline(enum render_format f)
{
	return f == RENDER_CHROME || f == RENDER_SPEEDSCOPE;
}

int render_write(FILE *out, const void *view)
{
	const struct render_view *v = view;
	const struct profile *p = v->p;
	struct report_text_opts text = {
	    .top = v->top,
	    .lines = v->format == RENDER_LINES,
	    .comments = p->comments,
	    .ncomments = p->ncomments,
	};
	struct flame_opts flame = {v->title, NULL, v->icicle, 0, 0};

	switch (v->format) {
	case RENDER_FOLDED:
		return folded_write(out, v->set);
	case RENDER_SVG:
		return flame_write_svg(out, v->set, &flame);
	case RENDER_PPROF:
		return pprof_write_view(out, p, v->set);
	case RENDER_CALLGRIND:
		return callgrind_write(out, v->set, p->sample_types, p->nsample_types,
				       profile_comment(p, "command"));
	case RENDER_SPEEDSCOPE:
		return speedscope_write(out, v->set, v->events, v->nevents,
					v->title ? v->title : v->name);
	case RENDER_CHROME:
		return chrome_write(out, v->set, v->events, v->nevents);
	case RENDER_TEXT:
	case RENDER_LINES:
		break;
	}
	return report_text_write(out, v->set, &text);
}

int render_diff_write(FILE *out, const void *view)
{
	const struct render_view *v = view;
	struct flame_opts flame = {v->title ? v->title : "Differential Flame Graph", NULL,
				   v->icicle, 1, v->before->total};

	if (v->format == RENDER_SVG)
		return flame_write_svg(out, v->merged, &flame);
	return report_diff_write(out, v->before, v->set, v->top, v->before_name, v->name);
}
