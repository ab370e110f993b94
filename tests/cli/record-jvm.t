#!/bin/bash
# A JVM's JIT code: Debian's openjdk-17 keeps no perf map unless asked, so
# its compiled Java is one frame, [JIT: java], with a note naming
# --jit-map; `record --jit-map` asks the JVM (jcmd PID Compiler.perfmap)
# at the end of the recording, and the Java methods are named from the
# map it writes. The JVM runs as a second user the test makes, from a JDK
# that user owns, whose bin/jcmd (the one recce runs, beside the JVM's
# java) the user planted: it must run as that user, never as root.
. "$(dirname "$0")/lib.sh"
need_file "$RECCE" /usr/bin/java /usr/bin/javac /usr/bin/jcmd "$TARGETS/hot"
plan 14

make_user
mkdir -m 0755 "$T/jv"
cat >"$T/jv/Hot.java" <<'JAVA'
public class Hot {
    static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
    public static void main(String[] a) {
        System.out.println("ready");
        long s = 0;
        for (;;) s += fib(25);
    }
}
JAVA
ok "Hot.java compiles" javac -d "$T/jv" "$T/jv/Hot.java"
chmod -R a+rX "$T/jv"

# The user's JDK: Debian's, but for the java launcher copied in and a
# jcmd of the user's own that says who ran it.
JDK=$(dirname "$(dirname "$(readlink -f /usr/bin/java)")")
mkdir -p "$T/jdk/bin"
cp "$JDK/bin/java" "$T/jdk/bin/java"
ln -s "$JDK/lib" "$T/jdk/lib"
ln -s "$JDK/conf" "$T/jdk/conf"
printf '#!/bin/sh\nid -u >%s\nexec /usr/bin/jcmd "$@"\n' "$T/jcmd-ran-as" >"$T/jdk/bin/jcmd"
chmod 0755 "$T/jdk/bin/jcmd"
: >"$T/jcmd-ran-as"
chown -R "$U" "$T/jdk" "$T/jcmd-ran-as"

# The JVM as the second user (setpriv execs: $PID is the JVM).
spawn "$T/jvm.out" setpriv --reuid="$U" --regid="$(id -g "$U")" --clear-groups \
	"$T/jdk/bin/java" -Xss16m -cp "$T/jv" Hot
JVM=$PID
MAP=/tmp/perf-$JVM.map
remove_at_exit "$MAP"
ok "the JVM runs as $U" wait_for 60 grep -q ready "$T/jvm.out"

run "$RECCE" record -p "$JVM" -d 2 -o "$T/plain.pb.gz"
is "$RC" 0 "record -p JVM exits 0" || show_run
like "$(cat "$ERR")" "java \(pid $JVM\) runs JIT code it keeps no perf map of, shown as \[JIT: java\]; record with --jit-map" \
	"without a map: [JIT: java], and the note names --jit-map"
ok "and the JVM was not asked: no map" test ! -e "$MAP"

run "$RECCE" record -p "$JVM" -d 2 --jit-map -o "$T/map.pb.gz"
is "$RC" 0 "record -p JVM --jit-map exits 0" || show_run
unlike "$(cat "$ERR")" 'warning|error' "with no warning"
is "$(cat "$T/jcmd-ran-as")" "$(id -u "$U")" "the user's jcmd ran as the user, not as root"
is "$(stat -c %U "$MAP" 2>&1)" "$U" "the JVM wrote its map, as its own user"
F=$(folded "$T/map.pb.gz")
cmp_ok "$(folded_count "$F" 'Hot\.fib\(int\)')" '>' 0 "Hot.fib is named from it" ||
	diag "$(folded_top "$F" 3)"
run "$RECCE" trace -p "$JVM" Hot.fib
is "$RC" 1 "trace -p JVM Hot.fib: exit 1"
like "$(cat "$ERR")" "it names JIT code of process $JVM \(long Hot\.fib\(int\), in $MAP\)" \
	"names the Java method in the JVM's map"
kill "$JVM"

# Not a JVM: --jit-map says it asked none.
spawn "$T/hot.out" "$TARGETS/hot"
run "$RECCE" record -p "$PID" -d 0.3 --jit-map -o "$T/hot.pb.gz"
is "$RC" 0 "record --jit-map of a program that is no JVM exits 0"
like "$(cat "$ERR")" "^recce: --jit-map: no target is a JVM, so none was asked for a perf map$" \
	"and says no JVM was asked"
