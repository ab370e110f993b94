# Renders one of the docs/recce*.md pages as plain terminal text, for
# `recce CMD --help`: no markup left (no #, ** or backticks), section
# headings in capitals as man pages have them, code kept verbatim.
# The pages use a small part of Markdown: headings, paragraphs, "- "
# lists, indented and fenced code, `code` and **strong** spans.
/^```/ { fenced = !fenced; next }
fenced || /^    / { print; next }
/^# / { print substr($0, 3); next }
/^##+ / { sub(/^##+ /, ""); print toupper($0); next }
{
	gsub(/\*\*/, "")
	gsub(/`/, "")
	print
}
