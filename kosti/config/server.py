"""``[server]``: the dashboard's HTTP server."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any

from pydantic import Field, field_validator

from kosti.config.base import Section, doc


class ServerSettings(Section):
    """Dashboard HTTP server (``[server]``). The installer writes a fixed random 6-digit PIN."""

    host: str = Field("127.0.0.1", description=doc("""
        Address to listen on: "127.0.0.1" = this machine only; "0.0.0.0" = the whole network (phones at the table)."""))
    port: Annotated[int, Field(ge=1, le=65535)] = Field(8000, description=doc("""
        TCP port (1–65535)."""))
    pin: str | None = Field(None, json_schema_extra={"example": "123456"}, description=doc("""
        PIN (4–6 digits) asked before anyone can change the game when host is not 127.0.0.1.
        Unset: a random PIN is chosen at every start and printed in the log (journalctl -u kosti)."""))
    allowed_hosts: Annotated[list[str], Field(max_length=32)] = Field(default_factory=list, description=doc("""
        Host names the dashboard answers under, besides IP addresses, localhost and this machine's name
        (NAME and NAME.local), e.g. ["kosti.lan"]: requests naming any other host are refused, reads too."""))
    monitor_from: Annotated[list[str], Field(max_length=32)] = Field(default_factory=list, description=doc("""
        Networks besides this machine that may read /healthz and /metrics, e.g. ["192.168.1.0/24"] for a
        Prometheus server or a monitor on the local network; empty = this machine only."""))

    @field_validator("monitor_from")
    @classmethod
    def _networks_ok(cls, v: list[str]) -> list[str]:
        for n in v:
            try:
                ipaddress.ip_network(n.strip(), strict=False)
            except ValueError:
                raise ValueError(f"not an IP address or network (e.g. 192.168.1.0/24): {n!r}") from None
        return [n.strip() for n in v]

    @field_validator("allowed_hosts")
    @classmethod
    def _names_ok(cls, v: list[str]) -> list[str]:
        return [cls._host_ok(n) for n in v]

    @field_validator("host")
    @classmethod
    def _host_ok(cls, v: str) -> str:
        v = v.strip()
        try:
            ipaddress.ip_address(v)
            return v
        except ValueError:
            pass
        if not re.fullmatch(r"(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?)+", v):
            raise ValueError(f"not an IP address or host name: {v!r}")
        return v

    @field_validator("pin", mode="before")
    @classmethod
    def _pin_str(cls, v: Any) -> Any:
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        if isinstance(v, str) and not v.strip():
            return None
        return v

    @field_validator("pin")
    @classmethod
    def _pin_ok(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"\d{4,6}", v.strip()):
            raise ValueError("must be 4–6 digits")
        return v.strip() if v else v

    @property
    def is_loopback(self) -> bool:
        """True when only this machine can reach the server (127.0.0.0/8, ::1, ``localhost``)."""
        if self.host.lower() in ("localhost", "localhost."):
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False
