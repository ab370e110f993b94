# Renders one of the docs/recce*.md pages as a man page (roff, man
# macros), for `man recce-record`. Call with -v name=recce-record
# -v version=X. The page's title line becomes .TH, the paragraph under
# it NAME, the code block after that SYNOPSIS, the rest DESCRIPTION until
# the first "## " section. The pages
# use a small part of Markdown: headings, paragraphs, "- " lists,
# indented and fenced code, `code` and **strong** spans.
function esc(s) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	return s
}
# Inline markup: `code` and **strong** in bold.
function inline(s,   out, i, c, code, strong) {
	s = esc(s)
	out = ""
	while ((i = match(s, /`|\*\*/)) > 0) {
		c = substr(s, i, RLENGTH)
		out = out substr(s, 1, i - 1)
		if (c == "`") { out = out (code ? "\\fR" : "\\fB"); code = !code }
		else { out = out (strong ? "\\fR" : "\\fB"); strong = !strong }
		s = substr(s, i + RLENGTH)
	}
	return out s
}
# A line of text; roff takes a leading . or ' as a request.
function text(s) {
	if (s ~ /^[.']/)
		s = "\\&" s
	print s
}
function end_code() { if (incode) { print ".fi"; print ".RE"; incode = 0 } }
BEGIN {
	printf ".TH %s 1 \"\" \"recce %s\" \"recce manual\"\n", toupper(name), version
	state = "title"
}
/^```/ {
	if (!fenced) { end_code(); print ".PP"; print ".RS 4"; print ".nf" }
	else { print ".fi"; print ".RE" }
	fenced = !fenced
	next
}
fenced { text(esc($0)); next }
/^# / { next }
/^##+ / {
	end_code()
	level = index($0, " ") - 1
	sub(/^##+ /, "")
	print (level == 2 ? ".SH " : ".SS ") toupper(esc($0))
	state = "body"
	para = 0
	next
}
/^$/ { blank = 1; next }
/^    / {
	if (state == "name") { print ".SH SYNOPSIS"; state = "synopsis"; blank = 0 }
	if (!incode) { if (state != "synopsis") print ".PP"; print ".RS 4"; print ".nf"; incode = 1 }
	else if (blank) print ""
	blank = 0
	text(esc(substr($0, 5)))
	next
}
{
	end_code()
	if (state == "title") {
		# "recce trace - trace calls..." -> "recce-trace \- trace calls...",
		# the form whatis and apropos read.
		print ".SH NAME"
		state = "name"
		if (sub(/^[^-]* - /, "")) { print esc(name) " \\- " inline($0); next }
	} else if ((state == "name" || state == "synopsis") && blank) {
		print ".SH DESCRIPTION"
		state = "body"
		blank = 0
	}
	if (/^- /) { print ".IP \\(bu 2"; text(inline(substr($0, 3))) }
	else if (/^  [^ ]/ && !blank) text(inline(substr($0, 3)))
	else { if (blank) print ".PP"; text(inline($0)) }
	blank = 0
}
END { end_code() }
