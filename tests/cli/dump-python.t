#!/bin/bash
# `recce dump -p PID` on CPython: each thread's Python frames, with the
# line each runs, in place of the interpreter's native frame that ran
# them, the C code under a Python call above it; a thread's Python name
# (the main thread's, threading's MainThread);
# the thread that holds the GIL and those that wait for it. On Debian's python3.11 (stripped),
# and on every other CPython of pyenv's on this machine: 3.11 and 3.12
# read by recce's layouts, 3.13 by the offsets it publishes, another
# version named and its native frames still shown.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" /usr/bin/python3.11 /bin/sleep "$TARGETS/fake-python"
SRC=tests/py/dump-target.py
FILE=$PWD/$SRC # as Python names a script it runs
at() { echo "$FILE:$(source_line "$SRC" "# mark: $1")"; }

# py_frames DUMP TID: the Python frames of a thread, "NAME (FILE:LINE)"
# each, one per line.
py_frames()
{
	awk -v tid="$2" '/^thread / { on = ($2 == tid) } on && /^    #[0-9]+ +\(python\) / {
		sub(/^    #[0-9]+ +\(python\) /, ""); print }' "$1"
}


# python_sleep PYTHON: its main thread asleep in time.sleep and another
# spinning; dumped into $T/NAME.dump, where NAME is its version.
python_sleep()
{
	local py=$1 v main spinner
	v=$(python_version "$py")
	spawn "$T/$v.out" "$py" "$SRC" sleep
	local P=$PID
	main_asleep() { grep -qx hrtimer_nanosleep /proc/"$P"/wchan; }
	ok "$v: the target is ready" wait_for 60 eval 'grep -q spinning "$T/$v.out" && main_asleep'
	run "$RECCE" dump -p "$P"
	is "$RC" 0 "$v: dump exits 0" || show_run
	cp "$OUT" "$T/$v.dump"
	is "$(sed -n 2p "$OUT")" "CPython $v: 2 Python threads, their frames in place of the interpreter's" \
		"$v: the version and the Python threads are said"
	# (3.11 gives module code no __module__: its globals' __name__ names it.)
	is "$(py_frames "$T/$v.dump" "$P")" "__main__.schläfer ($(at sleeper))
__main__.mitte_眠 ($(at middle))
__main__.<module> ($(at module))" "$v: the main thread's Python frames, each at the line it runs, names in UTF-8"
	like "$(awk -v tid="$P" '/^thread / { on = ($2 == tid) } on && /^    #0 /' "$T/$v.dump")" \
		' clock_nanosleep ' "$v: the C code of time.sleep above them, the libc call first"
	spinner=$(ls /proc/"$P"/task | grep -vx "$P")
	is "$(py_frames "$T/$v.dump" "$spinner" | sed 's/ (\([^:]*\):[0-9]*)$/ \1/' | sed -n '1,3p')" \
		"__main__.spin $FILE
__main__.Worker.run $FILE
__main__.outer $FILE" "$v: the spinning thread's frames, innermost first"
	is "$(py_frames "$T/$v.dump" "$spinner" | sed -n '2,3p')" "__main__.Worker.run ($(at run))
__main__.outer ($(at outer))" "$v: its callers at the lines of the calls"
	is "$(grep "^thread $spinner " "$T/$v.dump" | sed 's/), .*/)/')" \
		"thread $spinner (python${v%.*}, Python thread \"spinner-ü\")" \
		"$v: the spinning thread is named by its threading.Thread's name"
	is "$(grep "^thread $P " "$T/$v.dump" | sed 's/), .*/)/')" \
		"thread $P (python${v%.*}, Python thread \"MainThread\")" \
		"$v: the main thread, which no Thread started, by threading's name for it"
	like "$(py_frames "$T/$v.dump" "$spinner" | sed -n '4,$p' | sed 's/ (.*//' | tr '\n' ' ')" \
		'^threading\.Thread\.run threading\.Thread\._bootstrap_inner threading\.Thread\._bootstrap $' \
		"$v: under them threading's own, as started"
	is "$(grep -c '_PyEval_EvalFrameDefault' "$T/$v.dump")" 0 \
		"$v: every frame of the interpreter's loop is shown as the Python it ran"
	ok "$v: the target runs on" kill -0 "$P"
	kill "$P"
}

# python_gil PYTHON: a thread asleep in C holding the GIL, the main thread
# waiting for it.
python_gil()
{
	local py=$1 v
	v=$(python_version "$py")
	spawn "$T/$v-gil.out" "$py" "$SRC" gil
	local P=$PID
	stuck() {
		grep -q holding "$T/$v-gil.out" && grep -qx hrtimer_nanosleep /proc/"$P"/task/*/wchan &&
			grep -q futex /proc/"$P"/wchan
	}
	ok "$v: one thread holds the GIL in C, the main thread waits" wait_for 60 stuck
	run "$RECCE" dump -p "$P"
	is "$RC" 0 "$v: dump of the stuck process exits 0" || show_run
	cp "$OUT" "$T/$v-gil.dump"
	local hog
	hog=$(ls /proc/"$P"/task | grep -vx "$P")
	is "$(grep '^thread ' "$OUT" | sed 's/ (.*), sleeping in [a-z_]*//' | sort)" \
		"$(printf 'thread %s, holding the GIL:\nthread %s, waiting for the GIL:\n' "$hog" "$P" | sort)" \
		"$v: who holds the GIL and who waits for it"
	is "$(py_frames "$T/$v-gil.dump" "$hog" | head -1)" "__main__.hog ($(at hog))" \
		"$v: the holder is in hog(), at the call that sleeps"
	kill "$P"
}

DEBIAN=$(python_version /usr/bin/python3.11)
python_sleep /usr/bin/python3.11
python_gil /usr/bin/python3.11

# JSON: the same, for a program.
spawn "$T/json.out" /usr/bin/python3.11 "$SRC" gil
P=$PID
ok "the stuck target again" wait_for 60 eval 'grep -q holding "$T/json.out" && grep -q futex /proc/'"$P"'/wchan'
run "$RECCE" dump -p "$P" --json
is "$RC" 0 "dump --json exits 0" || show_run
is "$(python3 - "$OUT" "$P" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
main = int(sys.argv[2])
out = [d["python"]["version"], str(d["python"]["frames_read"])]
for t in sorted(d["threads"], key=lambda t: t["tid"] != main):
    py = [f for f in t["frames"] if f.get("python")]
    out.append("%s %s %s" % ("main" if t["tid"] == main else "other", t["holds_gil"], t["waits_gil"]))
    # The line each frame names holds the call it is in.
    text = open(py[0]["file"]).read().split("\n")[py[0]["line"] - 1]
    out.append("%s %s" % (py[0]["function"], "acquire" in text or "sleep" in text))
print(" ".join(out))
PY
)" "$DEBIAN True main False True threading.Condition.wait True other True False __main__.hog True" \
	"JSON: the version, who holds the GIL, each thread's frames at the lines of their calls"
kill "$P"

# A process that poses as CPython 3.11 with state that lies (a thread list
# and a frame chain that come back on themselves, pointers to nowhere,
# lengths in the exabytes): the dump ends, shows what could be read once,
# and says where the chain stopped; the process runs on.
CUT="    [the Python frames end here: the next could not be read, or repeats one above]"
for mode in ring self wild; do
	spawn "$T/fake-$mode.out" "$TARGETS/fake-python" "$mode"
	ok "fake-python $mode is ready" wait_for 60 grep -q ready "$T/fake-$mode.out"
	run "$RECCE" dump -p "$PID"
	is "$RC" 0 "a lying CPython ($mode): dump exits 0" || show_run
	like "$(cat "$OUT")" "$(printf '%s' "$CUT" | sed 's/[][().,]/\\&/g')" "$mode: it says where the Python frames stop"
	ok "$mode: the process runs on" kill -0 "$PID"
	cp "$OUT" "$T/fake-$mode.dump"
	kill "$PID"
done
is "$(sed -n 2p "$T/fake-ring.dump")" "CPython 3.11.2: 2 Python threads, their frames in place of the interpreter's" \
	"ring: a thread list that comes back on itself is read once"
is "$(py_frames "$T/fake-ring.dump" "$(sed -n 's/^thread \([0-9]*\).*/\1/p' "$T/fake-ring.dump" | head -1)")" \
	"liar_0 (fake.py:7)
liar_1 (fake.py:7)
liar_2 (fake.py:7)" "ring: a frame chain that comes back on itself is shown once"

# Not a CPython: no word of Python.
spawn "$T/sleep.out" /bin/sleep 1000
ok "sleep runs" wait_for 60 grep -qx hrtimer_nanosleep /proc/"$PID"/wchan
run "$RECCE" dump -p "$PID"
is "$(grep -c CPython "$OUT")" 0 "a program that is not Python: nothing said of Python"

# pyenv's builds where this machine has them (not a Debian package: none
# is required): its 3.11 (libpython shared, with DWARF), 3.12 and 3.13
# read, another version named.
tried=""
mapfile -t PYENV < <(pyenv_pythons)
for py in "${PYENV[@]}"; do
	v=$(python_version "$py")
	tried="$tried $v"
	case "$v" in
	3.11.* | 3.12.* | 3.13.*)
		python_sleep "$py"
		python_gil "$py"
		;;
	*)
		# Older ones name themselves by their files' names: 3.X.
		spawn "$T/$v.out" "$py" -c 'import time; print("spinning", flush=True); time.sleep(1000)'
		P=$PID
		ok "$v: the target is ready" wait_for 60 grep -q spinning "$T/$v.out"
		run "$RECCE" dump -p "$P"
		is "$RC" 0 "$v: dump exits 0" || show_run
		is "$(sed -n 2p "$OUT")" "CPython ${v%.*}: recce reads the Python frames of 3.11 to 3.13 only; native frames shown" \
			"$v: a version recce does not read is named"
		like "$(cat "$OUT")" ' (clock_nanosleep|select) ' "$v: and its native frames are shown (time.sleep's wait)"
		kill "$P"
		;;
	esac
done
diag "pyenv's CPython builds tried:${tried:- none on this machine}"
done_testing
