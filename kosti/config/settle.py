"""``[settle]``: when the dice count as settled; the fields are :class:`kosti.vision.params.SettleParams`'."""

from __future__ import annotations

from pydantic import model_validator

from kosti.config.base import Section
from kosti.vision.params import SettleParams, config_field


class SettleSettings(Section):
    """When the dice count as settled (``[settle]``): the keyword arguments of
    :class:`kosti.vision.settle.SettleDetector`, under the same names.

    Files written before the names were unified spell them ``still_time_s``, ``motion_threshold`` and
    ``still_threshold``; those keys are still read.
    """

    still_s: float = config_field(SettleParams, "still_s")
    motion_fraction: float = config_field(SettleParams, "motion_fraction")
    still_fraction: float = config_field(SettleParams, "still_fraction")

    @model_validator(mode="after")
    def _hysteresis(self) -> SettleSettings:
        if self.still_fraction > self.motion_fraction:
            raise ValueError(
                f"settle.still_fraction: {self.still_fraction} must not exceed "
                f"settle.motion_fraction = {self.motion_fraction} (the gap is the hysteresis)")
        return self

    def detector_kwargs(self) -> dict[str, float]:
        """Keyword arguments for ``kosti.vision.settle.SettleDetector(**kwargs)``: the fields as they are."""
        return self.model_dump()

    def settle_params(self) -> SettleParams:
        """These settings as :class:`kosti.vision.params.SettleParams` (the others at their defaults)."""
        return SettleParams(**self.model_dump())
