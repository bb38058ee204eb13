"""docker-compose.yml's two-node job, run for real on one machine, and the file checked against it.

Two launcher processes stand for the two containers: node 0 at 127.0.0.2 (the master,
``node0`` in the compose file), node 1 at 127.0.0.3, each with two ranks of
``examples/train_digits.py`` (a short run), the job secret in the environment.
"""

import secrets

import pytest

from launcher_scripts.harness import ROOT, start

yaml = pytest.importorskip("yaml")
pytest.importorskip("zmq")
ADDRESSES = {"node0": "127.0.0.2", "node1": "127.0.0.3"}  # service name -> this test's node address
SHORT_RUN = ["--epochs", "1", "--max-steps", "3"]


def services():
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]


def option(command, name):
    return command[command.index(name) + 1]


def test_compose_file_describes_two_nodes_of_two_ranks_training_digits():
    svc = services()
    assert sorted(svc) == ["node0", "node1"]
    for rank, name in enumerate(("node0", "node1")):
        command = svc[name]["command"]
        assert command[0] == "disttorch-launch" and command[-1] == "examples/train_digits.py"
        assert option(command, "--nnodes") == "2" and option(command, "--node-rank") == str(rank)
        assert option(command, "--nproc") == "2"
        assert option(command, "--master-addr") == "node0"  # the master reached by its service name
        assert option(command, "--master-port") == option(svc["node0"]["command"], "--master-port")
        assert svc[name]["hostname"] == name
        env = svc[name]["environment"]
        assert env["DISTTORCH_JOB_SECRET"].startswith("${DISTTORCH_JOB_SECRET:?")  # passed in, never stored
        assert env["DISTTORCH_SAME_HOST_TRANSPORT"] == "tcp"
        assert svc[name]["build"] == "."
    assert svc["node1"]["depends_on"] == ["node0"]
    copied = " ".join(
        line.split("#")[0]
        for line in (ROOT / "Dockerfile").read_text().splitlines()
        if line.startswith("COPY ")
    ).split()
    for name in ("pyproject.toml", "setup.py", "disttorch", "launcher", "examples"):  # what the build reads
        assert name in copied, f"the Dockerfile does not copy {name}"


def node_command(command, port, checkpoints):
    """The compose command for this machine: the launcher module, the test's master address and port."""
    args = list(command[1:])
    args[args.index("--master-addr") + 1] = ADDRESSES[option(command, "--master-addr")]
    args[args.index("--master-port") + 1] = str(port)
    return args + SHORT_RUN + ["--checkpoint-dir", str(checkpoints)]


@pytest.mark.timeout(90)
def test_two_nodes_train_digits_together(tmp_path):
    from disttorch.launcher.rendezvous import free_port

    port = free_port(ADDRESSES["node0"])
    secret = secrets.token_hex(32)
    procs = []
    for name, service in services().items():
        env = {k: str(v) for k, v in service["environment"].items()}
        # in a container the route to node0 gives a rank its address; here each node is told its own
        env.update(DISTTORCH_JOB_SECRET=secret, DISTTORCH_HOST_ADDR=ADDRESSES[name])
        procs.append(start(*node_command(service["command"], port, tmp_path / "ckpt"), env=env))
    results = []
    for proc in procs:
        try:
            out, err = proc.communicate(timeout=80)
        finally:
            proc.kill()
        results.append((proc.returncode, out, err))
    (code0, out0, err0), (code1, out1, err1) = results
    assert code0 == 0 and code1 == 0, err0 + err1
    assert "2 local ranks 0..1 of world 4, node 0 of 2" in out0 + err0
    assert "2 local ranks 2..3 of world 4, node 1 of 2" in out1 + err1
    assert "[rank0]: 4 rank(s), 3823 training images, 3 steps of 4 x 32 images per epoch" in out0
    assert "[rank0]: test accuracy:" in out0
    assert (tmp_path / "ckpt" / "latest").read_text() == "step-000000001.pt"
