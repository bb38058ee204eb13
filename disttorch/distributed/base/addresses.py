"""Which address the store master listens on, given the host name clients will connect to.

torch.distributed's TCPStore master listens on every interface. disttorch
listens as narrowly as the host name allows, so a single-node job (the
launcher sets ``MASTER_ADDR=127.0.0.1``) is never reachable from the network:

* a loopback address, or a name that resolves only to loopback (``localhost``)
  and is not this machine's host name: that loopback address;
* an IP address of one of this machine's interfaces: that address;
* this machine's host name (which may resolve to ``127.0.1.1`` locally but to
  the real interface elsewhere), ``""``, ``0.0.0.0`` or ``*``: all interfaces;
* anything else (an address this machine does not own, e.g. behind NAT):
  all interfaces, with a logged warning.

A name that does not resolve at all is an error (:func:`check_resolves`), raised at once
on every process rather than after a rendezvous that can never complete.
"""

from __future__ import annotations

import ipaddress
import logging
import socket

from .errors import DistNetworkError

logger = logging.getLogger("disttorch.distributed.store")

_ANY = "0.0.0.0"


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback IP address (127.0.0.0/8, ::1, or an IPv4-mapped
    loopback such as ``::ffff:127.0.0.1``; an IPv6 zone ``%eth0`` is ignored)."""
    try:
        ip = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def owns_address(address: str) -> bool:
    """Whether ``address`` (an IP address) belongs to one of this machine's interfaces."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((address, 0))
        except OSError:
            return False
    return True


def _resolve(host: str) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except socket.gaierror:
        return []
    return list(dict.fromkeys(info[4][0] for info in infos))


def check_resolves(host: str, setting: str = "the store host") -> None:
    """Raise :class:`DistNetworkError` naming ``setting`` if ``host`` is neither an address
    nor a name that resolves (``""``, ``*`` and ``0.0.0.0`` mean every interface: fine)."""
    if host in ("", "*", _ANY, "::"):
        return
    try:
        socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise DistNetworkError(
            f"{setting}={host!r} does not resolve to an address ({error}); set it to the IP "
            "address or host name of the machine running rank 0"
        ) from None


def _is_loopback_name(name: str) -> bool:
    return name.split(".")[0] in ("localhost", "ip6-localhost", "ip6-loopback")


def _is_this_host(host: str) -> bool:
    """Whether ``host`` is this machine's own name (``getfqdn`` may say ``localhost``: not counted)."""
    host = host.lower()
    names = {
        name.lower()
        for name in (socket.gethostname(), socket.getfqdn())
        if not _is_loopback_name(name.lower())
    }
    return host in names or any(host.split(".")[0] == name.split(".")[0] for name in names)


def is_this_machine(host: str) -> bool:
    """Whether ``host`` (an address or a name) is this machine: a loopback or own address,
    this host's name, or a name that resolves to one of them."""
    if is_loopback(host) or _is_loopback_name(host.lower()) or _is_this_host(host):
        return True
    return any(is_loopback(a) or owns_address(a.split("%")[0]) for a in _resolve(host))


def listen_address(host: str) -> str:
    """Return the address the store master should bind so that clients can reach it at ``host``.

    Args:
        host: the host name or address clients connect to (e.g. ``MASTER_ADDR``).
    """
    if host in ("", "*", _ANY, "::"):
        return _ANY if host != "::" else "::"
    try:
        ipaddress.ip_address(host)
        literal = True
    except ValueError:
        literal = False
    if literal:
        if is_loopback(host) or owns_address(host):
            return host
        logger.warning("store host %s is not an address of this machine; listening on all interfaces", host)
        return _ANY
    if not _is_loopback_name(host.lower()) and _is_this_host(host):
        return _ANY
    check_resolves(host)
    addresses = _resolve(host)
    if addresses and all(is_loopback(a) for a in addresses):
        return next((a for a in addresses if ":" not in a), addresses[0])
    if any(owns_address(a) for a in addresses):
        return _ANY
    logger.warning(
        "store host %r does not resolve to an address of this machine; listening on all interfaces", host
    )
    return _ANY


def address_towards(host: str) -> str:
    """The IPv4 address of this machine that others reach it at when they reach ``host``:
    ``127.0.0.1`` if ``host`` is a loopback address, else the address of the interface that
    routes to it.

    Raises:
        OSError: ``host`` does not resolve to an IPv4 address.
    """
    ip = socket.getaddrinfo(host, None, socket.AF_INET)[0][4][0]
    if is_loopback(ip):
        return "127.0.0.1"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((ip, 9))  # no packet is sent: this only asks the kernel for a route
        return s.getsockname()[0]


def endpoint_host(host: str) -> str:
    """``host`` as written in a ZeroMQ ``tcp://`` endpoint (IPv6 addresses in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host
