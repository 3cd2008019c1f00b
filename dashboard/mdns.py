"""``NAME.local`` without avahi: the dashboard announces itself over mDNS / DNS-SD with ``python-zeroconf``
(``pip install 'kosti[mdns]'``) when no avahi-daemon runs on the machine.

On the Raspberry Pi the installer sets up avahi-daemon and ``/etc/avahi/services/kosti.service``, and this module
stays quiet: two responders for one name would answer each other's probes. Elsewhere — a laptop running
``kosti run --host 0.0.0.0``, a Pi where avahi was removed — :func:`announce` registers the same ``_http._tcp``
service (``kosti dice table on NAME``, TXT ``path=/``, ``tv=/tv``) and answers ``NAME.local`` with the LAN address,
so phones find the table by name and network browsers list it. Without the package it says once in the log how to
get it, and the table works by its IP address (the QR code holds the IP address anyway, :mod:`kosti.dashboard.join`).
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path
from typing import Any

from kosti.dashboard.join import ANY, LOOPBACK, lan_address

log = logging.getLogger(__name__)

#: The socket a running avahi-daemon listens on (Debian's path).
AVAHI_SOCKET = Path("/run/avahi-daemon/socket")
#: The DNS-SD service type of the dashboard.
SERVICE_TYPE = "_http._tcp.local."


def avahi_running() -> bool:
    """Whether an avahi-daemon runs here (its socket exists): it then announces the table (the installer's file)."""
    return AVAHI_SOCKET.exists()


def service_name(hostname: str) -> str:
    """The DNS-SD instance name: ``kosti dice table on NAME._http._tcp.local.`` (as the avahi service file's)."""
    return f"kosti dice table on {hostname}.{SERVICE_TYPE}"


class MdnsAnnouncer:
    """One ``python-zeroconf`` registration of the dashboard (:meth:`start`, :meth:`stop`).

    Args:
        port: the dashboard's TCP port. address: the IPv4 address to announce (default: the LAN address).
        hostname: the name to answer as ``NAME.local`` (default: this machine's host name).
    """

    def __init__(self, port: int, address: str | None = None, hostname: str | None = None) -> None:
        self.port = port
        self.address = address or lan_address()
        self.hostname = (hostname or socket.gethostname().split(".")[0]).lower()
        self._zc: Any = None
        self._info: Any = None

    @property
    def name(self) -> str:
        """The registered instance name."""
        return service_name(self.hostname)

    def start(self) -> None:
        """Register the service and the host name (raises ``ImportError`` without ``zeroconf``, ``OSError`` when no
        multicast socket can be opened)."""
        from zeroconf import IPVersion, ServiceInfo, Zeroconf

        self._info = ServiceInfo(SERVICE_TYPE, self.name, port=self.port, server=f"{self.hostname}.local.",
                                 addresses=[socket.inet_aton(self.address)],
                                 properties={"path": "/", "tv": "/tv"})
        self._zc = Zeroconf(ip_version=IPVersion.V4Only)
        try:
            self._zc.register_service(self._info, allow_name_change=True)
        except Exception:
            self._zc.close()
            self._zc = None
            raise

    def stop(self) -> None:
        """Say goodbye (the records leave the network's caches) and close (idempotent)."""
        if self._zc is None:
            return
        try:
            self._zc.unregister_service(self._info)
        finally:
            self._zc.close()
            self._zc = None


def announce(host: str, port: int) -> MdnsAnnouncer | None:
    """Announce a dashboard bound to ``host:port`` when it is reachable from the LAN, no avahi-daemon runs and
    ``zeroconf`` is installed; None otherwise (the reason is logged). Never raises: a table without mDNS still
    works by its IP address."""
    if host in LOOPBACK or host.startswith("127."):
        return None
    if avahi_running():
        log.debug("avahi-daemon runs: it announces the table")
        return None
    address = lan_address() if host in ANY else host
    if ":" in address or address.startswith("127."):
        return None
    announcer = MdnsAnnouncer(port, address)
    try:
        announcer.start()
    except ImportError:
        log.info("no avahi-daemon and no python-zeroconf: phones find the table by its IP address only "
                 "(pip install 'kosti[mdns]', or apt install avahi-daemon, for %s.local)", announcer.hostname)
        return None
    except Exception as exc:  # OSError, zeroconf's own errors...: the table works without mDNS
        log.warning("cannot announce %s.local over mDNS: %s", announcer.hostname, exc)
        return None
    log.info("announced http://%s.local:%d/ over mDNS (python-zeroconf)", announcer.hostname, port)
    return announcer
