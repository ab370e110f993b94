# Module code run twice over, as imports run it: first "early"'s, then
# "late"'s 40 times, each from the same source, so each new code object
# takes the place the one before it freed. Both are "<module>", one
# interned string; only their globals (kept, as sys.modules keeps a
# module's) tell them apart. recce must never name late's code early's.
SRC = """
for i in range(N):
    pass
"""
kept = []


def run(name, n):
    g = {"__name__": name, "N": n}
    kept.append(g)
    exec(compile(SRC, name + ".py", "exec"), g)


def phase_one():
    run("early", 3000000)


def phase_two():
    for k in range(40):
        run("late", 150000)


phase_one()
phase_two()
