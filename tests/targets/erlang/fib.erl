%% A BEAM target for recce's JIT test: run with `erl +JPperf true`, the
%% JIT writes /tmp/perf-PID.map and a profiler must name fib:fib/1.
%%
%%   erl +JPperf true -noshell -pa DIR -eval 'fib:loop(Seconds)' -s init stop
-module(fib).
-export([fib/1, loop/1]).

fib(0) -> 0;
fib(1) -> 1;
fib(N) -> fib(N - 1) + fib(N - 2).

%% Computes fib(25) over and over for Seconds seconds (forever if 0).
loop(Seconds) ->
    Start = erlang:monotonic_time(millisecond),
    loop(Start + Seconds * 1000, Seconds =:= 0, 0).

loop(End, Forever, Count) ->
    _ = fib(25),
    case Forever orelse erlang:monotonic_time(millisecond) < End of
        true -> loop(End, Forever, Count + 1);
        false -> io:format("fib: ~b rounds~n", [Count + 1])
    end.
