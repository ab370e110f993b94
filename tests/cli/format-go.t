#!/bin/bash
# A profile written by a Go program (runtime/pprof) converted to every
# format; each output names the Go program's hot function.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE"
command -v go >/dev/null 2>&1 || skip_all "go is not installed (Debian package golang-go)"
plan 9

export GO111MODULE=off GOFLAGS= GOCACHE="$T/gocache" GOPATH="$T/gopath"
run go build -o "$T/goprof" tests/go/main.go
is "$RC" 0 "the Go program builds offline" || show_run
run "$T/goprof" "$T/go.pprof" 1
is "$RC" 0 "it writes its CPU profile" || show_run
for f in text folded pprof callgrind speedscope svg; do
	run "$RECCE" report --format "$f" -o "$T/out.$f" "$T/go.pprof"
	if [ "$f" = pprof ]; then
		ok "--format pprof of a Go profile: go tool pprof reads it" \
			sh -c "[ $RC = 0 ] && go tool pprof -top '$T/out.pprof' 2>/dev/null | grep -q 'main.burnGoCPU'"
	else
		ok "--format $f of a Go profile names main.burnGoCPU" \
			sh -c "[ $RC = 0 ] && grep -q 'main.burnGoCPU' '$T/out.$f'"
	fi
done
run "$RECCE" report --format chrome -o "$T/out.chrome" "$T/go.pprof"
is "$RC" 1 "--format chrome of a Go profile says it has no timeline (exit 1)"
