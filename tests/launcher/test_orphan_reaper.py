"""A worker is a child subreaper: the orphans of its descendants become its children. It reaps
them as they exit (no zombie piles up while it lives), and never a child it started itself:
``subprocess.run`` and ``multiprocessing.Process.join`` still see their children's exit codes."""

from __future__ import annotations

import json
import sys

import pytest

from launcher_scripts.harness import launch

SCRIPT = r"""
import json, multiprocessing, os, subprocess, sys, time

def zombies():
    me = os.getpid()
    out = []
    for tid in os.listdir(f"/proc/{me}/task"):
        for pid in open(f"/proc/{me}/task/{tid}/children").read().split():
            try:
                stat = open(f"/proc/{pid}/stat").read()
            except OSError:
                continue
            if stat[stat.rfind(")") + 2] == "Z":
                out.append(int(pid))
    return out

if __name__ == "__main__":
    multiprocessing.set_start_method("fork")
    # sh exits after 0.5 s; its background sleep is adopted by this worker and exits at 0.8 s
    subprocess.run(["sh", "-c", "sleep 0.8 & sleep 0.5"], check=True)
    child = multiprocessing.Process(target=sys.exit, args=(7,))
    child.start()
    late = subprocess.Popen(["sh", "-c", "exit 5"])
    run = subprocess.run(["sh", "-c", "exit 3"]).returncode
    time.sleep(0.9)  # the orphan exits; the own children above wait, exited, through several looks
    left = zombies()
    child.join()
    out = {"run": run, "process": child.exitcode, "popen": late.wait(), "left": left,
           "own": sorted([child.pid, late.pid])}
    with open(sys.argv[1], "w") as f:
        json.dump(out, f)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="child subreapers are Linux's")
@pytest.mark.timeout(60)
def test_a_worker_reaps_adopted_orphans_and_leaves_its_own_children_alone(tmp_path):
    script = tmp_path / "orphans.py"
    script.write_text(SCRIPT)
    result = tmp_path / "out.json"
    proc = launch("--nproc", "1", str(script), str(result), timeout=50)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = json.loads(result.read_text())
    assert (out["run"], out["process"], out["popen"]) == (3, 7, 5), out
    assert sorted(out["left"]) == out["own"], f"zombies of the worker besides its own children: {out}"
