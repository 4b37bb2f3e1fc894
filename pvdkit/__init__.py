"""pvdkit: read, write, convert and compare NVIDIA PhysX OmniPVD recordings (.ovd and HDF5)."""

from pvdkit.types import Command, DataType, PvdError

__all__ = ["Command", "DataType", "PvdError"]
__version__ = "0.1.0"
