"""Tests of rendezvous: init_method parsing (env:// with torchrun, SLURM and Open MPI variables,
tcp://, file://), SLURM host-list expansion, local_rank, listen addresses, and real multi-process rendezvous."""

from __future__ import annotations

import socket
from datetime import timedelta

import pytest
from test_store import _no_inherited_job_secret, free_port, run_python  # noqa: F401 (autouse fixture)

from disttorch.distributed.base.addresses import listen_address
from disttorch.distributed.rendezvous import expand_hostlist, local_rank, parse_init_method, rendezvous
from disttorch.distributed.store import FileStore, TCPStore

# ---------------------------------------------------------------- SLURM host lists


@pytest.mark.parametrize(
    "hostlist, expected",
    [
        ("node[01-04],gpu7", ["node01", "node02", "node03", "node04", "gpu7"]),
        ("single", ["single"]),
        ("n[08-10]", ["n08", "n09", "n10"]),
        ("n[8-10]", ["n8", "n9", "n10"]),
        ("a[1-2]b[3,5]", ["a1b3", "a1b5", "a2b3", "a2b5"]),
        ("x[1,3-4],y[7]", ["x1", "x3", "x4", "y7"]),
        ("rack1-node[1-2].cluster", ["rack1-node1.cluster", "rack1-node2.cluster"]),
    ],
)
def test_expand_hostlist(hostlist, expected):
    assert expand_hostlist(hostlist) == expected


@pytest.mark.parametrize("bad", ["n[1-", "n1-2]", "n[a-b]", "n[3-1]", "n[[1]]"])
def test_expand_hostlist_rejects_malformed_lists(bad):
    with pytest.raises(ValueError, match=r"host list|range"):
        expand_hostlist(bad)


# ---------------------------------------------------------------- env://

TORCHRUN = {
    "RANK": "1",
    "WORLD_SIZE": "4",
    "LOCAL_RANK": "1",
    "MASTER_ADDR": "10.0.0.5",
    "MASTER_PORT": "29500",
}


def test_env_torchrun_variables():
    config = parse_init_method("env://", env=TORCHRUN)
    assert (config.kind, config.rank, config.world_size, config.host, config.port) == (
        "tcp",
        1,
        4,
        "10.0.0.5",
        29500,
    )
    assert config.is_master is False
    assert parse_init_method(None, env={**TORCHRUN, "RANK": "0"}).is_master is True
    # arguments win over the environment, as in torch.distributed
    assert parse_init_method("env://", rank=3, world_size=8, env=TORCHRUN).rank == 3


def test_env_agent_store_makes_every_rank_a_client():
    config = parse_init_method("env://", env={**TORCHRUN, "RANK": "0", "DISTTORCH_USE_AGENT_STORE": "1"})
    assert config.is_master is False


def test_env_slurm_variables_and_nodelist():
    env = {
        "SLURM_PROCID": "5",
        "SLURM_NTASKS": "8",
        "SLURM_LOCALID": "1",
        "SLURM_NNODES": "2",
        "SLURM_STEP_NODELIST": "node[07-08]",
        "SLURM_NODELIST": "other[1-9]",
        "SLURM_JOB_ID": "4242",
    }
    config = parse_init_method("env://", env=env)
    assert (config.rank, config.world_size, config.host) == (5, 8, "node07")
    assert 20000 <= config.port < 30000
    assert (
        parse_init_method("env://", env={**env, "SLURM_PROCID": "0"}).port == config.port
    )  # every rank agrees
    assert parse_init_method("env://", env={**env, "SLURM_JOB_ID": "4243"}).port != config.port
    assert local_rank(env) == 1
    del env["SLURM_STEP_NODELIST"]
    assert parse_init_method("env://", env=env).host == "other1"
    assert parse_init_method("env://", env={**env, "SLURM_NNODES": "1"}).host == "127.0.0.1"
    assert parse_init_method("env://", env={**env, "MASTER_ADDR": "head", "MASTER_PORT": "1234"}).port == 1234


def test_env_open_mpi_variables():
    env = {
        "OMPI_COMM_WORLD_RANK": "2",
        "OMPI_COMM_WORLD_SIZE": "4",
        "OMPI_COMM_WORLD_LOCAL_RANK": "2",
        "OMPI_COMM_WORLD_LOCAL_SIZE": "4",
        "PMIX_NAMESPACE": "prterun-host-1234@1",
    }
    config = parse_init_method("env://", env=env)
    assert (config.rank, config.world_size, config.host) == (2, 4, "127.0.0.1")
    assert 20000 <= config.port < 30000
    assert local_rank(env) == 2
    with pytest.raises(
        ValueError, match=r"MASTER_ADDR expected for a multi-node Open MPI job.*mpirun -x MASTER_ADDR"
    ):
        parse_init_method("env://", env={**env, "OMPI_COMM_WORLD_LOCAL_SIZE": "2"})


def test_env_torchrun_variables_take_precedence_over_the_scheduler():
    env = {**TORCHRUN, "SLURM_PROCID": "0", "SLURM_NTASKS": "1"}
    assert parse_init_method("env://", env=env).rank == 1


@pytest.mark.parametrize(
    "env, message",
    [
        ({}, "environment variable RANK expected, but not set. Run with disttorch-launch"),
        ({"RANK": "0"}, "environment variable WORLD_SIZE expected"),
        ({"RANK": "0", "WORLD_SIZE": "2"}, "environment variable MASTER_ADDR expected, but not set"),
        ({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h"}, "environment variable MASTER_PORT expected"),
        ({"SLURM_PROCID": "0"}, r"SLURM_NTASKS expected \(as SLURM_PROCID is set by SLURM\)"),
        ({"RANK": "zero", "WORLD_SIZE": "2"}, "environment variable RANK must be an integer, got 'zero'"),
        ({**TORCHRUN, "MASTER_PORT": "70000"}, "MASTER_PORT must be a port number 1..65535, got 70000"),
        ({**TORCHRUN, "RANK": "4"}, r"rank must be in \[0, world_size - 1\] = \[0, 3\], got rank 4"),
    ],
)
def test_env_errors_say_what_is_missing(env, message):
    with pytest.raises(ValueError, match=message):
        parse_init_method("env://", env=env)


def test_env_errors_name_the_package_the_program_imported(monkeypatch):
    # under the alias a program sees PyTorch's own text, "torch.distributed"
    import sys

    import disttorch

    with pytest.raises(ValueError, match=r"^Error initializing disttorch\.distributed using env://"):
        parse_init_method("env://", env={})
    monkeypatch.setitem(sys.modules, "torch", disttorch)
    with pytest.raises(ValueError, match=r"^Error initializing torch\.distributed using env:// rendezvous: "):
        parse_init_method("env://", env={})


def test_local_rank_defaults_to_zero_and_prefers_local_rank():
    assert local_rank({}) == 0
    assert local_rank({"LOCAL_RANK": "3", "SLURM_LOCALID": "1"}) == 3
    assert local_rank({"OMPI_COMM_WORLD_LOCAL_RANK": "5"}) == 5


# ---------------------------------------------------------------- tcp:// and file://


def test_tcp_and_file_urls():
    config = parse_init_method("tcp://127.0.0.1:23456", rank=0, world_size=2, env={})
    assert (config.kind, config.host, config.port, config.is_master) == ("tcp", "127.0.0.1", 23456, True)
    config = parse_init_method("tcp://node1:23456?rank=1&world_size=3", env={})
    assert (config.rank, config.world_size, config.is_master) == (1, 3, False)
    config = parse_init_method("file:///tmp/some/store", rank=1, world_size=2, env={})
    assert (config.kind, config.path) == ("file", "/tmp/some/store")


@pytest.mark.parametrize(
    "url, message",
    [
        ("tcp://127.0.0.1", "needs a host and a port"),
        ("tcp://127.0.0.1:notaport", "needs a host and a port"),
        ("file://", "needs a path"),
        ("udp://x:1", "unsupported init_method 'udp://x:1'"),
        ("tcp://h:1?rank=x", "query parameter rank must be an integer"),
    ],
)
def test_bad_urls(url, message):
    with pytest.raises(ValueError, match=message):
        parse_init_method(url, rank=0, world_size=1, env={})


def test_tcp_without_rank_says_how_to_give_it():
    with pytest.raises(
        ValueError, match=r"tcp:// init_method needs rank and world_size.*\?rank=..&world_size="
    ):
        parse_init_method("tcp://127.0.0.1:1234", env={})


# ---------------------------------------------------------------- listen addresses


def test_listen_address_keeps_loopback_and_opens_this_hosts_name():
    assert listen_address("127.0.0.1") == "127.0.0.1"
    assert listen_address("localhost") == "127.0.0.1"
    assert listen_address("0.0.0.0") == "0.0.0.0"
    assert listen_address(socket.gethostname()) == "0.0.0.0"
    assert listen_address("203.0.113.9") == "0.0.0.0"  # not ours (TEST-NET-3): all interfaces, with a warning


# ---------------------------------------------------------------- real rendezvous


@pytest.mark.timeout(60)
@pytest.mark.parametrize("scheme", ["env", "tcp", "file"])
def test_rendezvous_in_real_processes(scheme, tmp_path):
    port = free_port()
    url = {"env": "env://", "tcp": f"tcp://127.0.0.1:{port}", "file": f"file://{tmp_path}/rdzv"}[scheme]
    code = f"""
        import os
        from datetime import timedelta
        from disttorch.distributed.rendezvous import rendezvous
        rank = int(os.environ["WORKER"])
        os.environ.update(RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT="{port}")
        args = (-1, -1) if {scheme!r} == "env" else (rank, 2)
        store, r, n = rendezvous({url!r}, *args, timeout=timedelta(seconds=20))
        store.set(f"hello/{{r}}", f"rank {{r}} of {{n}}")
        print(";".join(store.get(f"hello/{{k}}").decode() for k in range(n)))
        store.set(f"exit/{{r}}", "")
        if r == 0:  # rank 0 hosts the TCP store: it leaves last
            store.wait([f"exit/{{k}}" for k in range(n)])
        store.close()
    """
    outputs = run_python(code, n=2, timeout=50)
    assert [o.strip() for o in outputs] == ["rank 0 of 2;rank 1 of 2"] * 2


def test_rendezvous_returns_the_right_store_kinds(tmp_path):
    store, rank, size = rendezvous(f"file://{tmp_path}/s", 0, 1, timeout=timedelta(seconds=5), env={})
    assert isinstance(store, FileStore) and (rank, size) == (0, 1)
    assert store.timeout == timedelta(seconds=5)
    store.close()
    port = free_port()
    store, rank, size = rendezvous(f"tcp://127.0.0.1:{port}", 0, 1, timeout=timedelta(seconds=5), env={})
    assert isinstance(store, TCPStore) and store.port == port
    store.close()


def test_is_this_machine_knows_loopback_own_names_and_others():
    from disttorch.distributed.base.addresses import is_this_machine

    assert is_this_machine("127.0.0.2") and is_this_machine("localhost")
    assert is_this_machine(socket.gethostname())
    assert not is_this_machine("203.0.113.9")  # TEST-NET-3
    assert not is_this_machine("no-such-host.invalid")
